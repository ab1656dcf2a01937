package rawsock

import (
	"fmt"
	"io"
	"net"
	"sync"
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
	readFn func(fd uintptr) bool
	nowFn  func(fd uintptr) // ReadNow's callback (now.go)

	pool *sync.Pool // ReadPooledEach's or ReadPooledNow's, while it reads (pooled.go)
	pbuf *[]byte
	each func(b *[]byte, n int) bool // ReadPooledEach's, while it reads

	wb      []byte // what the current write has still to send
	wb2     []byte // and after it (WriteTwo), in the same system call
	wdone   int
	file    fileSpan // and after both, from a file (SendFile)
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
	s.readFn, s.writeFn, s.nowFn = s.read, s.write, s.readNow
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

// read is Read's callback: false asks the netpoller to wait.
func (s *Sock) read(fd uintptr) bool {
	if s.pool != nil {
		return s.readPooled(fd)
	}
	return s.readInto(fd)
}

// readInto reads into s.rb: false when the socket has nothing yet.
func (s *Sock) readInto(fd uintptr) bool {
	for {
		r, e := sysRead(fd, s.rb)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait until readable
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

// write is the callback of every write (Write, WriteTwo, SendFile), the
// one loop that makes their system calls: false asks the netpoller to
// wait.
func (s *Sock) write(fd uintptr) bool {
	for s.wdone < len(s.wb)+len(s.wb2) || s.file.left > 0 {
		r, e := s.writeOnce(fd)
		switch e {
		case 0:
			if !s.wrote(r) {
				return true // the file ends early: truncated underneath
			}
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

// writeOnce makes the write's next system call: its bytes (those before a
// file held back to leave with the file's first), then the file's.
func (s *Sock) writeOnce(fd uintptr) (int, syscall.Errno) {
	switch {
	case s.wdone >= len(s.wb)+len(s.wb2) && s.file.cold:
		return sysSendfileCold(fd, s.file.fd, &s.file.off, min(s.file.left, maxSendfile))
	case s.wdone >= len(s.wb)+len(s.wb2):
		return sysSendfile(fd, s.file.fd, &s.file.off, min(s.file.left, maxSendfile))
	case s.file.left > 0:
		return sysSendMore(fd, s.wb[s.wdone:])
	case s.wdone >= len(s.wb):
		return sysWrite(fd, s.wb2[s.wdone-len(s.wb):])
	case len(s.wb2) == 0:
		return sysWrite(fd, s.wb[s.wdone:])
	default:
		return sysWritev(fd, &s.iov, s.wb[s.wdone:], s.wb2)
	}
}

// wrote counts r bytes the last call wrote; false when a sendfile sent
// none, the file ending before its span.
func (s *Sock) wrote(r int) bool {
	if s.wdone < len(s.wb)+len(s.wb2) {
		s.wdone += r
		return true
	}
	s.file.left -= int64(r)
	return r > 0
}

var (
	_ io.Reader = (*Sock)(nil)
	_ io.Writer = (*Sock)(nil)
)
