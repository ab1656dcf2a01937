package proxy

import (
	"syscall"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
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
	rc, ok := rawsock.Under(r.ctx.Conn())
	if !ok {
		return false
	}
	gone := false
	cerr := rc.Control(func(fd uintptr) {
		n, errno := rawsock.Peek(fd)
		switch errno {
		case 0:
			gone = n == 0 // end of file
		case syscall.EAGAIN, syscall.EINTR:
		default:
			gone = true // reset, not connected
		}
	})
	return gone || cerr != nil
}

var _ phppool.Client = (*request)(nil)
