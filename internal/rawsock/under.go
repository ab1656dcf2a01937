package rawsock

import (
	"net"
	"syscall"
	"unsafe"
)

// Under is the raw socket under c's wrappers (TLS, a PROXY header's
// reader, h2c sniffing: each names the connection it wraps NetConn), or
// false when there is none.
func Under(c net.Conn) (syscall.RawConn, bool) {
	for range 4 { // wrappers stack a few deep at most
		if sc, ok := c.(syscall.Conn); ok {
			rc, err := sc.SyscallConn()
			return rc, err == nil
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		c = w.NetConn()
	}
	return nil, false
}

// Peek looks at the socket fd without taking anything or waiting (recv
// with MSG_PEEK|MSG_DONTWAIT, a raw system call, so that it neither
// wakes the scheduler's monitor nor blocks): n is 0 at end of file, and
// errno EAGAIN when nothing is there yet. Call it from a RawConn's
// Control or Read.
func Peek(fd uintptr) (n int, errno syscall.Errno) {
	var b [1]byte
	r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return int(r), e
}
