package h2

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
)

// standin is what every stream of connection c shows as ctx.Conn(): its
// addresses, and for TLS (or h2c behind a TLS terminator) the handshake
// state, so that ctx.IsTLS and ctx.TLSConnectionState work.
func (s *Server) standin(c net.Conn) net.Conn {
	sc := streamConn{laddr: c.LocalAddr(), raddr: c.RemoteAddr()}
	switch tc := c.(type) {
	case *tls.Conn:
		return &tlsStreamConn{streamConn: sc, state: tc.ConnectionState()}
	case *h2cConn:
		if s.cfg.BehindTLS {
			return &tlsStreamConn{streamConn: sc, terminator: !proxyproto.Proxied(tc.Conn)}
		}
	}
	return &sc
}

func (s *Server) acquireCtx(c net.Conn) *fasthttp.RequestCtx {
	ctx, _ := s.ctxPool.Get().(*fasthttp.RequestCtx)
	if ctx == nil {
		ctx = new(fasthttp.RequestCtx)
	}
	ctx.Init2(c, s.logger, false)
	ctx.Response.Header.SetNoDefaultContentType(true) // as the HTTP/1.1 side
	return ctx
}

// releaseCtx resets what a handler may have set, closing body streams
// and io.Closer user values as fasthttp does after a request.
func (s *Server) releaseCtx(ctx *fasthttp.RequestCtx) {
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.ResetUserValues()
	if ctx.Hijacked() {
		ctx.Hijack(nil) // HTTP/2 streams cannot be hijacked; the handler got its response written
	}
	s.ctxPool.Put(ctx)
}

// dateCache is the Date header of the current second.
var dateCache atomic.Pointer[dateEntry]

type dateEntry struct {
	sec int64
	v   string
}

func httpDate() string {
	now := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == now.Unix() {
		return d.v
	}
	d := &dateEntry{sec: now.Unix(), v: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.v
}

// contentLength is the length fasthttp would announce, or -1 for none.
func contentLength(resp *fasthttp.Response, head bool) int {
	switch {
	case resp.IsBodyStream():
		return resp.Header.ContentLength()
	case head && len(resp.Body()) == 0:
		return resp.Header.ContentLength() // set for HEAD from the GET it mirrors
	default:
		return len(resp.Body())
	}
}

func bodyless(status int) bool {
	return status < 200 || status == http.StatusNoContent || status == http.StatusNotModified
}

// connectionHeader reports the HTTP/1.1 connection-specific headers that
// RFC 9113 §8.2.2 forbids in HTTP/2, and Content-Length, which
// writeHeaders sets itself.
func connectionHeader(k []byte) bool {
	switch string(k) {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Content-Length":
		return true
	}
	return false
}

// FromTerminator reports whether ctx came over a BehindTLS listener at
// the TLS terminator's own address: no PROXY header named the client, so
// the address is the terminator's. It vouches for the scheme, never for
// who the client is.
func FromTerminator(ctx *fasthttp.RequestCtx) bool {
	switch c := ctx.Conn().(type) {
	case *terminatedConn:
		return !proxyproto.Proxied(c.Conn)
	case *tlsStreamConn:
		return c.terminator
	}
	return false
}

// IsHTTP2 reports whether ctx is an HTTP/2 stream served by this package.
func IsHTTP2(ctx *fasthttp.RequestCtx) bool {
	switch ctx.Conn().(type) {
	case *streamConn, *tlsStreamConn:
		return true
	}
	return false
}

// errStreamConn: a stream's bytes travel in HTTP/2 frames, not through
// the stand-in connection.
var errStreamConn = errors.New("h2: an HTTP/2 stream has no connection of its own")

// streamConn stands in for the connection in a stream's RequestCtx so
// that ctx.RemoteAddr, ctx.RemoteIP and ctx.LocalAddr work. It is shared
// by the streams of one connection and never changes.
type streamConn struct {
	laddr, raddr net.Addr
	owner        *conn // the connection the streams are on (SendInterim)
}

func (*streamConn) Read([]byte) (int, error)         { return 0, errStreamConn }
func (*streamConn) Write([]byte) (int, error)        { return 0, errStreamConn }
func (*streamConn) Close() error                     { return nil }
func (c *streamConn) LocalAddr() net.Addr            { return c.laddr }
func (c *streamConn) RemoteAddr() net.Addr           { return c.raddr }
func (*streamConn) SetDeadline(time.Time) error      { return nil }
func (*streamConn) SetReadDeadline(time.Time) error  { return nil }
func (*streamConn) SetWriteDeadline(time.Time) error { return nil }

// tlsStreamConn is a streamConn over TLS: fasthttp's ctx.IsTLS and
// ctx.TLSConnectionState find the handshake's state through it.
type tlsStreamConn struct {
	streamConn
	state      tls.ConnectionState
	terminator bool // see FromTerminator
}

func (*tlsStreamConn) Handshake() error                       { return nil }
func (c *tlsStreamConn) ConnectionState() tls.ConnectionState { return c.state }

var (
	_ net.Conn = (*streamConn)(nil)
	_ net.Conn = (*tlsStreamConn)(nil)
)
