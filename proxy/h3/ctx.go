package h3

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// IsHTTP3 reports whether ctx is an HTTP/3 stream served by this package.
func IsHTTP3(ctx *fasthttp.RequestCtx) bool {
	_, ok := ctx.Conn().(*streamConn)
	return ok
}

// streamConn stands in for the connection in a stream's RequestCtx, one
// per QUIC connection, so that ctx.RemoteAddr, ctx.LocalAddr, ctx.IsTLS
// and ctx.TLSConnectionState work. The addresses are UDP ones.
type streamConn struct {
	streamctx.Conn
	c *conn
}

// Handshake and ConnectionState make fasthttp's ctx.IsTLS true. Before
// the handshake completes (a 0-RTT request) the state is not complete
// either.
func (*streamConn) Handshake() error { return nil }
func (s *streamConn) ConnectionState() tls.ConnectionState {
	return s.c.qc.ConnectionState().TLS
}

// date is the Date value of the current second, formatted once per
// second for every stream.
var date atomic.Pointer[struct {
	unix int64
	b    []byte
}]

func appendDate(dst []byte, now time.Time) []byte {
	if d := date.Load(); d != nil && d.unix == now.Unix() {
		return append(dst, d.b...)
	}
	b := now.UTC().AppendFormat(nil, http.TimeFormat)
	date.Store(&struct {
		unix int64
		b    []byte
	}{now.Unix(), b})
	return append(dst, b...)
}

var _ net.Conn = (*streamConn)(nil)
