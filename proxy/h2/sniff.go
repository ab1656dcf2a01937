package h2

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
	"github.com/ramjet-proxy/ramjet/proxy/handshake"
	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// sniffer sorts the connections of a plain listener: those that open
// with the HTTP/2 client preface become *h2cConn, which fasthttp takes
// for a TLS connection that negotiated h2 and hands to serveH2; the rest
// are HTTP/1.1 for fasthttp. Sorting reads the first bytes, so it runs
// on a goroutine per new connection (package handshake), bounded by
// timeout, never in the accept loop. With h2c off, connections pass
// through unread.
type sniffer struct {
	h2c       bool
	behindTLS bool
	timeout   time.Duration
}

func newSniffListener(ln net.Listener, h2c, behindTLS bool, timeout time.Duration) net.Listener {
	sn := &sniffer{h2c: h2c, behindTLS: behindTLS, timeout: timeout}
	return handshake.NewListener(ln, sn.sort)
}

// errSilent: the peer sent nothing, or left, before its first bytes.
var errSilent = errors.New("h2: connection closed before its first bytes")

// sort reads as much of the preface as the client sends and stops at the
// first byte that differs: "GET / HTTP/1.0\r\n\r\n" is shorter than the
// preface and must not wait for more.
func (s *sniffer) sort(c net.Conn) (net.Conn, error) {
	rc := replayConn{Conn: c}
	if !s.h2c {
		return s.http1(rc), nil
	}
	if err := c.SetReadDeadline(time.Now().Add(s.timeout)); err != nil {
		return nil, err
	}
	preface := []byte(http2.ClientPreface)
	buf := make([]byte, len(preface))
	n := 0
	for n < len(buf) && bytes.Equal(buf[:n], preface[:n]) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			if n == 0 {
				return nil, errSilent
			}
			break // let the protocol that owns these bytes report it
		}
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	rc.buf = buf[:n]
	if bytes.Equal(rc.buf, preface) {
		return &h2cConn{replayConn: rc}, nil
	}
	return s.http1(rc), nil
}

func (s *sniffer) http1(rc replayConn) net.Conn {
	if s.behindTLS {
		return &terminatedConn{replayConn: rc}
	}
	if rc.buf == nil {
		return rc.Conn
	}
	return &rc
}

// replayConn returns buf before reading on from Conn.
type replayConn struct {
	net.Conn
	buf []byte
}

// NetConn is the connection read on from (as tls.Conn's).
func (c *replayConn) NetConn() net.Conn { return c.Conn }

// unread is the connection under c once c replayed what the sniffer
// read (before that, c's next bytes are not the socket's), else nil.
func (c *replayConn) unread() net.Conn {
	if len(c.buf) > 0 {
		return nil
	}
	return c.Conn
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// WriteBody passes a response body's announcement (conns.Conn's) to the
// connection under c, whose writes c's are: HTTP/1.1 on this listener
// gets the one-writev answer the main listener's does. Only HTTP/1.1
// handlers see c; an HTTP/2 stream's connection is its own.
func (c *replayConn) WriteBody(body []byte) {
	if a, ok := c.Conn.(interface{ WriteBody([]byte) }); ok {
		a.WriteBody(body)
	}
}

// ConnState is fasthttp's hook for the HTTP/1.1 connections of a plain
// listener, this package's and the main one: it tells the connection
// (under the sniffer's wrapper, here) when fasthttp answered a request
// and waits for the next, and when the next one's bytes are in, so that
// its next read may park it (conns.Conn.Idle). Only plain HTTP/1.1
// connections qualify: never TLS, nor an HTTP/2 connection (*h2cConn).
func ConnState(c net.Conn, st fasthttp.ConnState) {
	var under net.Conn
	switch x := c.(type) {
	case *conns.Conn: // a plain listener that sorts nothing
		under = x
	case *replayConn:
		under = x.unread()
	case *terminatedConn:
		under = x.unread()
	}
	pc, ok := under.(*conns.Conn)
	if !ok {
		return
	}
	switch st {
	case fasthttp.StateIdle:
		pc.Idle()
	case fasthttp.StateActive:
		pc.Busy()
	}
}

// h2cConn is a plain connection that sent the HTTP/2 preface. It poses
// as a TLS connection that negotiated h2 so that fasthttp hands it to
// serveH2, which unwraps it again.
type h2cConn struct{ replayConn }

func (*h2cConn) Handshake() error { return nil }

func (*h2cConn) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{NegotiatedProtocol: http2.NextProtoTLS}
}

// terminatedConn is an HTTP/1.1 connection from a TLS terminator in
// front: it poses as TLS so that the handler's ctx.IsTLS() is true, and
// tells the request so (streamctx.Transport).
type terminatedConn struct {
	replayConn
	streamctx.HTTP1Conn
}

func (*terminatedConn) BehindTLS() bool        { return true }
func (c *terminatedConn) FromTerminator() bool { return !proxyproto.Proxied(c.Conn) }

func (*terminatedConn) Handshake() error { return nil }

func (*terminatedConn) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }
