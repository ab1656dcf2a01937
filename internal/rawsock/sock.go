package rawsock

import (
	"fmt"
	"io"
	"net"
	"syscall"
)

// Sock reads and writes a connection's descriptor with raw system calls.
// One goroutine may read while another writes, as on a net.Conn, but
// reads must not overlap reads, nor writes writes: a call's state lives in
// the Sock so that the callbacks net's RawConn takes are made once, in New,
// and a read or a write allocates nothing.
type Sock struct {
	rc syscall.RawConn

	rb     []byte // the current read's buffer
	rn     int
	rerrno syscall.Errno
	rnow   bool // the current read does not wait (ReadNow)
	readFn func(fd uintptr) bool

	wb      []byte // what the current write has still to send
	wb2     []byte // and after it (WriteTwo), in the same system call
	wdone   int
	werrno  syscall.Errno
	writeFn func(fd uintptr) bool
	iov     [2]syscall.Iovec // writev's vector, here so that it does not escape per call
}

// New returns nc's raw socket, or false if nc has no descriptor.
func New(nc net.Conn) (*Sock, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	return Of(rc), true
}

// Of returns a Sock on rc, the socket a net.Conn's SyscallConn gives.
func Of(rc syscall.RawConn) *Sock {
	s := &Sock{rc: rc}
	s.readFn, s.writeFn = s.read, s.write
	return s
}

// Reset points s, no read or write under way, at another socket: a Sock
// that one connection no longer needs serves the next one with the
// callbacks it already has, allocating nothing.
func (s *Sock) Reset(rc syscall.RawConn) { s.rc = rc }

// Read reads into b, waiting until the socket is readable. A deadline or
// Close shows as the net.Conn's error would (a *net.OpError); end of file
// as io.EOF.
func (s *Sock) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	s.rb, s.rn, s.rerrno = b, 0, 0
	err := s.rc.Read(s.readFn)
	n, errno := s.rn, s.rerrno
	s.rb = nil
	switch {
	case err != nil:
		return 0, err // deadline or closed, wrapped by net
	case errno != 0:
		return 0, fmt.Errorf("read: %w", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// ReadNow is Read without the wait: what the socket holds now, or an
// error that is syscall.EAGAIN when it holds nothing.
func (s *Sock) ReadNow(b []byte) (int, error) {
	s.rnow = true
	n, err := s.Read(b)
	s.rnow = false
	return n, err
}

// read is Read's callback: false asks the netpoller to wait.
func (s *Sock) read(fd uintptr) bool {
	for {
		r, e := sysRead(fd, s.rb)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if !s.rnow {
				return false // wait until readable
			}
		}
		s.rn, s.rerrno = r, e
		return true
	}
}

// Write writes all of b, waiting while the socket is not writable.
func (s *Sock) Write(b []byte) (int, error) {
	return s.WriteTwo(b, nil)
}

// WriteTwo writes all of a and then all of b, both in one writev while
// the socket takes them, so that a response's head and its body leave in
// one system call (and one loopback delivery) without being copied
// together first. It reports the bytes written of both.
func (s *Sock) WriteTwo(a, b []byte) (int, error) {
	if len(a) == 0 {
		a, b = b, nil
	}
	if len(a) == 0 {
		return 0, nil
	}
	s.wb, s.wb2, s.wdone, s.werrno = a, b, 0, 0
	err := s.rc.Write(s.writeFn)
	done, errno := s.wdone, s.werrno
	s.wb, s.wb2 = nil, nil
	switch {
	case err != nil:
		return done, err
	case errno != 0:
		return done, fmt.Errorf("write: %w", errno)
	}
	return done, nil
}

// write is Write's callback: false asks the netpoller to wait.
func (s *Sock) write(fd uintptr) bool {
	for s.wdone < len(s.wb)+len(s.wb2) {
		var r int
		var e syscall.Errno
		switch {
		case s.wdone >= len(s.wb):
			r, e = sysWrite(fd, s.wb2[s.wdone-len(s.wb):])
		case len(s.wb2) == 0:
			r, e = sysWrite(fd, s.wb[s.wdone:])
		default:
			r, e = sysWritev(fd, &s.iov, s.wb[s.wdone:], s.wb2)
		}
		switch e {
		case 0:
			s.wdone += r
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // wait until writable
		default:
			s.werrno = e
			return true
		}
	}
	return true
}

var (
	_ io.Reader = (*Sock)(nil)
	_ io.Writer = (*Sock)(nil)
)
