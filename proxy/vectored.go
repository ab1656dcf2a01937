package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
)

// WriteBufferSize is fasthttp's write buffer on every client listener,
// the main one and h2's (h2.Config.WriteBufferSize): announceBody
// depends on it, so no listener may use another.
const WriteBufferSize = 4096

// announceBody lets a plain HTTP/1.1 connection send the answer's head
// and its in-memory body in one writev (conns.Conn.WriteBody) instead of
// the two or three writes fasthttp's buffer makes of a body larger than
// itself: a 30 KB hit or PHP page is one system call and one loopback
// delivery, and the body is never copied. Only a body fasthttp writes
// from where it lies qualifies: more than twice its buffer, not a
// stream, and sent (not HEAD, not a status without a body).
func announceBody(ctx *fasthttp.RequestCtx) {
	resp := &ctx.Response
	if resp.SkipBody || resp.IsBodyStream() || ctx.IsHead() || !statusHasBody(resp.StatusCode()) {
		return
	}
	body := resp.Body()
	if len(body) <= 2*WriteBufferSize {
		return
	}
	if c, ok := ctx.Conn().(bodyAnnouncer); ok {
		c.WriteBody(body)
	}
}

// bodyAnnouncer is conns.Conn's WriteBody, on the connection itself or on
// a wrapper whose writes are its (HTTP/1.1 on the h2c listener). A TLS
// connection has none: its writes are records, never the body's memory.
type bodyAnnouncer interface{ WriteBody(body []byte) }

var _ bodyAnnouncer = (*conns.Conn)(nil)

// statusHasBody: RFC 9110 6.4.1, no content after 1xx, 204 and 304.
func statusHasBody(code int) bool {
	return code >= 200 && code != fasthttp.StatusNoContent && code != fasthttp.StatusNotModified
}
