package h2

import (
	"crypto/tls"
	"net"

	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// standin is what every stream of connection c shows as ctx.Conn(): its
// addresses, and for TLS (or h2c behind a TLS terminator) the handshake
// state, so that ctx.IsTLS and ctx.TLSConnectionState work. It is the
// streams' streamctx.Transport.
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

// streamConn is an HTTP/2 stream's stand-in connection, pointing back at
// the connection its streams are on (SendInterim).
type streamConn struct {
	streamctx.Conn
	owner *conn
}

func (*streamConn) Protocol() streamctx.Protocol { return streamctx.HTTP2 }
func (*streamConn) BehindTLS() bool              { return false }
func (*streamConn) FromTerminator() bool         { return false }

// tlsStreamConn is a streamConn over TLS: fasthttp's ctx.IsTLS and
// ctx.TLSConnectionState find the handshake's state through it.
type tlsStreamConn struct {
	streamConn
	state      tls.ConnectionState
	behind     bool // h2c on a BehindTLS listener
	terminator bool // and no PROXY header named the client
}

func (*tlsStreamConn) Handshake() error                       { return nil }
func (c *tlsStreamConn) ConnectionState() tls.ConnectionState { return c.state }
func (c *tlsStreamConn) BehindTLS() bool                      { return c.behind }
func (c *tlsStreamConn) FromTerminator() bool                 { return c.terminator }

var (
	_ net.Conn            = (*streamConn)(nil)
	_ net.Conn            = (*tlsStreamConn)(nil)
	_ streamctx.Transport = (*streamConn)(nil)
	_ streamctx.Transport = (*tlsStreamConn)(nil)
	_ streamctx.Transport = (*terminatedConn)(nil)
)
