package conns

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A hit the disk tier sends from its file (proxy/sendfile.go) is the
// response's head, then the body with sendfile from the file's own
// offset: the descriptor is shared by every answer sending from it, so
// the socket's ReadFrom (which sends from the descriptor's offset) will
// not do. Announced (WriteFile), the head is held and goes out with
// MSG_MORE just before the sendfile, so that head and body leave in one
// segment: one loopback delivery, as a RAM hit's single writev.

// fileMark is the body WriteFile announces: no write is inside it, so
// every write is held until SendFile.
var fileMark [1]byte

// WriteFile tells c that the response the server writes next ends with a
// body SendFile sends. Without a raw socket it does nothing. Call it from
// the serving goroutine.
func (c *Conn) WriteFile() {
	if c.raw == nil {
		return
	}
	c.vec.body = fileMark[:]
}

// SendFile sends n bytes of the file fd from off on c (sendfile), after
// what was written before, and reports the bytes of the file sent. On a
// connection that is not a raw TCP socket it sends nothing and returns an
// error wrapping errors.ErrUnsupported. Call it from the serving
// goroutine.
func (c *Conn) SendFile(fd int, off, n int64) (int64, error) {
	if c.raw == nil || c.rc == nil {
		if err := c.sendHeld(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("conns: sendfile: %w", errors.ErrUnsupported)
	}
	s := senders.Get().(*fileSender)
	defer senders.Put(s)
	s.in, s.off, s.left, s.errno = fd, off, n, 0
	if c.vec.held != nil {
		s.head = *c.vec.held
	}
	c.vec.body = nil
	err := c.rc.Write(s.fn)
	sent := n - s.left
	errno := s.errno
	s.head = nil
	if c.vec.held != nil {
		c.releaseHeld()
	}
	switch {
	case err != nil:
		return sent, err
	case errno != 0:
		return sent, fmt.Errorf("conns: sendfile: %w", errno)
	}
	return sent, nil
}

// fileSender is one SendFile's state, for its callback (a method value
// made once, so that a send allocates nothing).
type fileSender struct {
	head      []byte // the held head, sent first with MSG_MORE
	in        int
	off, left int64
	errno     syscall.Errno
	fn        func(fd uintptr) bool
}

var senders = sync.Pool{New: func() any {
	s := &fileSender{}
	s.fn = s.send
	return s
}}

// send is SendFile's callback: false asks the netpoller to wait.
func (s *fileSender) send(fd uintptr) bool {
	for len(s.head) > 0 {
		r, _, e := syscall.Syscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&s.head[0])), uintptr(len(s.head)),
			unix.MSG_MORE|unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			s.head = s.head[r:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.errno = e
			return true
		}
	}
	for s.left > 0 {
		r, err := unix.Sendfile(int(fd), s.in, &s.off, int(min(s.left, 1<<30)))
		switch err {
		case nil:
			if r == 0 {
				return true // the file ends early: truncated underneath
			}
			s.left -= int64(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.errno = err.(syscall.Errno)
			return true
		}
	}
	return true
}
