package phppool

import (
	"fmt"
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawSock reads and writes a worker's socket with raw system calls. The
// socket is non-blocking (the netpoller waits for it), so read and write
// return at once; but made as ordinary system calls they tell Go's
// scheduler they might block, and php-cgi runs on the same core: writing
// a request wakes the worker, which takes the core before ramjet's write
// returns. The scheduler's monitor then saw a P stuck in a system call
// for every request, handed it to another thread and kept waking every
// 20 µs — about a tenth of ramjet's CPU per PHP request went there.
type rawSock struct {
	rc syscall.RawConn
}

// newRawSock returns nc's raw socket, or false if nc has no descriptor.
func newRawSock(nc net.Conn) (rawSock, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return rawSock{}, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return rawSock{}, false
	}
	return rawSock{rc: rc}, true
}

func (s rawSock) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until readable
			}
			n, errno = int(r), e
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

func (s rawSock) Write(b []byte) (int, error) {
	var done int
	var errno syscall.Errno
	err := s.rc.Write(func(fd uintptr) bool {
		for done < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[done])), uintptr(len(b)-done))
			switch e {
			case 0:
				done += int(r)
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
