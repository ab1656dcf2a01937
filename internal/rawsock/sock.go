package rawsock

import (
	"fmt"
	"io"
	"net"
	"syscall"
)

// Sock reads and writes a connection's descriptor with raw system calls.
// Its zero value is not usable; New makes one.
type Sock struct {
	rc syscall.RawConn
}

// New returns nc's raw socket, or false if nc has no descriptor.
func New(nc net.Conn) (Sock, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return Sock{}, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return Sock{}, false
	}
	return Sock{rc: rc}, true
}

// Read reads into b, waiting until the socket is readable. A deadline or
// Close shows as the net.Conn's error would (a *net.OpError); end of file
// as io.EOF.
func (s Sock) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			r, e := sysRead(fd, b)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until readable
			}
			n, errno = r, e
			return true
		}
	})
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

// Write writes all of b, waiting while the socket is not writable.
func (s Sock) Write(b []byte) (int, error) {
	var done int
	var errno syscall.Errno
	err := s.rc.Write(func(fd uintptr) bool {
		for done < len(b) {
			r, e := sysWrite(fd, b[done:])
			switch e {
			case 0:
				done += r
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, err
	case errno != 0:
		return done, fmt.Errorf("write: %w", errno)
	}
	return done, nil
}

var (
	_ io.Reader = Sock{}
	_ io.Writer = Sock{}
)
