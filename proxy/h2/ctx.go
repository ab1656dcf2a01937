package h2

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// standin is what every stream of connection c shows as ctx.Conn(): its
// addresses, and for TLS (or h2c behind a TLS terminator) the handshake
// state, so that ctx.IsTLS and ctx.TLSConnectionState work.
func (s *Server) standin(c net.Conn) net.Conn {
	sc := streamConn{Conn: streamctx.Conn{Local: c.LocalAddr(), Remote: c.RemoteAddr()}}
	switch tc := c.(type) {
	case *tls.Conn:
		return &tlsStreamConn{streamConn: sc, state: tc.ConnectionState()}
	case *h2cConn:
		if s.cfg.BehindTLS {
			return &tlsStreamConn{streamConn: sc, behind: true, terminator: !proxyproto.Proxied(tc.Conn)}
		}
	}
	return &sc
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

// BehindTLS reports whether ctx came over a BehindTLS listener: the TLS
// it counts as was a terminator's in front, not this server's.
func BehindTLS(ctx *fasthttp.RequestCtx) bool {
	switch c := ctx.Conn().(type) {
	case *terminatedConn:
		return true
	case *tlsStreamConn:
		return c.behind
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

// streamConn is an HTTP/2 stream's stand-in connection (IsHTTP2 looks for
// it), pointing back at the connection its streams are on (SendInterim).
type streamConn struct {
	streamctx.Conn
	owner *conn
}

// tlsStreamConn is a streamConn over TLS: fasthttp's ctx.IsTLS and
// ctx.TLSConnectionState find the handshake's state through it.
type tlsStreamConn struct {
	streamConn
	state      tls.ConnectionState
	behind     bool // see BehindTLS
	terminator bool // see FromTerminator
}

func (*tlsStreamConn) Handshake() error                       { return nil }
func (c *tlsStreamConn) ConnectionState() tls.ConnectionState { return c.state }

var (
	_ net.Conn = (*streamConn)(nil)
	_ net.Conn = (*tlsStreamConn)(nil)
)
