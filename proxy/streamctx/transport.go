package streamctx

import (
	"bytes"
	"net/http"

	"github.com/valyala/fasthttp"
)

// Protocol is the HTTP version a request came over.
type Protocol uint8

const (
	HTTP1 Protocol = iota // HTTP/1.0 or HTTP/1.1: the request line says which
	HTTP2
	HTTP3
	Protocols // how many there are
)

// Version is the protocol as a request line would name it, as the
// access log and the WAF's REQUEST_PROTOCOL show it (ModSecurity's
// spelling); "" for HTTP/1, whose request line names its own.
func (p Protocol) Version() string {
	switch p {
	case HTTP2:
		return "HTTP/2.0"
	case HTTP3:
		return "HTTP/3.0"
	}
	return ""
}

// Transport is what the server a request came through tells it about
// the connection, in one place: the protocol, whose TLS it counts as
// having come over, and how to send an interim response. A connection's
// stand-in (ctx.Conn()) implements it; a request asks once (TransportOf).
// ctx.IsTLS and ctx.RemoteAddr work over every transport as fasthttp's
// own: the stand-ins carry the handshake state and the addresses.
type Transport interface {
	Protocol() Protocol
	// BehindTLS: the TLS the request counts as was a terminator's in
	// front (a behind_tls listener), not this server's.
	BehindTLS() bool
	// FromTerminator: BehindTLS, and no PROXY header named the client,
	// so the connection's address is the terminator's own. It vouches
	// for the scheme, never for who the client is.
	FromTerminator() bool
	// SendInterim sends an interim (1xx) response on ctx ahead of its
	// final one, each field a name and a value, and reports whether it
	// did. It sends nothing (false) for a status the protocol cannot
	// send as interim, or once the final response has started.
	SendInterim(ctx *fasthttp.RequestCtx, status int, fields [][2][]byte) bool
}

// TransportOf is the transport ctx came over: its stand-in's, or
// HTTP/1.1 over a connection of fasthttp's own.
func TransportOf(ctx *fasthttp.RequestCtx) Transport {
	if t, ok := ctx.Conn().(Transport); ok {
		return t
	}
	return HTTP1Conn{}
}

// HTTP1Conn is HTTP/1.1 as fasthttp serves it, over ramjet's own TLS
// or none. A connection from a TLS terminator embeds it.
type HTTP1Conn struct{}

func (HTTP1Conn) Protocol() Protocol   { return HTTP1 }
func (HTTP1Conn) BehindTLS() bool      { return false }
func (HTTP1Conn) FromTerminator() bool { return false }

// SendInterim sends a 103 with the Link fields, as fasthttp's
// RequestCtx.EarlyHints writes them (nothing to an HTTP/1.0 client,
// RFC 9110 15.2), and no other 1xx: a 100 Continue answered the
// origin's own Expect, a 102 is obsolete. The client's response holds
// nothing yet (the answer is written after), so the Link fields put
// there for EarlyHints are taken out again.
func (HTTP1Conn) SendInterim(ctx *fasthttp.RequestCtx, status int, fields [][2][]byte) bool {
	if status != http.StatusEarlyHints {
		return false
	}
	h := &ctx.Response.Header
	links := false
	for _, f := range fields {
		if bytes.EqualFold(f[0], []byte("Link")) {
			h.AddBytesV("Link", f[1])
			links = true
		}
	}
	if !links {
		return false
	}
	err := ctx.EarlyHints()
	h.Del("Link")
	return err == nil
}

// Interim reports the statuses HTTP/2 and HTTP/3 send as interim
// responses: 1xx but 101, which they have no use for (RFC 9113 §8.6,
// RFC 9114 §4.5).
func Interim(status int) bool {
	return status >= 100 && status <= 199 && status != http.StatusSwitchingProtocols
}

var _ Transport = HTTP1Conn{}
