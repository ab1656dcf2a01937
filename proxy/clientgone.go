package proxy

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ramjet-proxy/ramjet/phppool"
)

// Gone reports whether the client of a request on an HTTP/1.1 connection
// closed or reset it, as nginx's client-abort check does: one recv with
// MSG_PEEK|MSG_DONTWAIT on its socket, which sees end of file without
// taking anything fasthttp has to read (a pipelined request is data: the
// client is there). Only the docroot's PHP pool asks, for a request that
// waited for a worker (phppool.Client). An HTTP/2 stream, a fragment or
// a socket behind a wrapper that hides it is never gone; neither is a
// TLS client whose close_notify came before its FIN (that record is data).
func (r *request) Gone() bool {
	if r.ctx == nil {
		return false
	}
	sc, ok := socketOf(r.ctx.Conn())
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true // closed
	}
	gone := false
	cerr := rc.Control(func(fd uintptr) {
		var b [1]byte
		// A raw system call: MSG_DONTWAIT returns at once, and an
		// ordinary one would wake the scheduler's monitor (the
		// runtime's entersyscall) for every request that queued.
		n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
			unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			gone = n == 0 // end of file
		case unix.EAGAIN, unix.EINTR:
		default:
			gone = true // reset, not connected
		}
	})
	return gone || cerr != nil
}

// socketOf unwraps c (TLS, PROXY protocol, HTTP/2 sniffing) down to the
// socket it reads from.
func socketOf(c net.Conn) (syscall.Conn, bool) {
	for range 4 { // wrappers stack a few deep at most
		switch x := c.(type) {
		case *net.TCPConn:
			return x, true
		case *net.UnixConn:
			return x, true
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return nil, false
		}
	}
	return nil, false
}

var _ phppool.Client = (*request)(nil)
