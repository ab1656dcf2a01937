package h1

import (
	"bufio"
	"bytes"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
)

// outcome is what answer leaves of a connection.
type outcome uint8

const (
	// awaiting: every request held was answered; wait for the next.
	awaiting outcome = iota
	// handOver: what is held starts with a request fasthttp must serve.
	handOver
	// ended: the connection is to be closed (by the caller: answer runs
	// inside the connection's read, conns.Awaiter.ServeRequests).
	ended
)

var headEnd = []byte("\r\n\r\n")

// answer answers the requests held on c that Inline answers, in order,
// and stops at the first it does not.
func (l *Lane) answer(c *conns.Conn) outcome {
	for {
		held := c.Held()
		if len(held) == 0 {
			return awaiting
		}
		end := bytes.Index(held, headEnd)
		if end < 0 {
			return handOver // the rest of the head is fasthttp's to wait for
		}
		switch o := l.answerOne(c, held[:end+len(headEnd)]); o {
		case awaiting:
			c.Consume(end + len(headEnd))
		default:
			return o
		}
	}
}

// answerOne answers the request whose head is head, if Inline does:
// awaiting when it was answered and the connection stays open.
func (l *Lane) answerOne(c *conns.Conn, head []byte) outcome {
	ctx := l.ctxs.Get(c)
	defer l.ctxs.Put(ctx)
	b := l.buffers()
	defer l.bufs.Put(b)
	b.src.Reset(head)
	b.br.Reset(&b.src)
	if ctx.Request.Header.Read(b.br) != nil || !mayAnswer(&ctx.Request) || !l.cfg.Inline(ctx) {
		return handOver
	}
	closeConn := l.prepare(ctx)
	// The clock as the context's start read it, microseconds ago, serves
	// the deadlines below: each read of it costs what a tenth of the
	// answer's own code does.
	now := ctx.Time()
	if !l.write(c, ctx, b.bw, now) {
		return ended
	}
	l.answered.Add(1)
	c.Idle()
	if closeConn {
		return ended
	}
	if l.cfg.IdleTimeout > 0 {
		_ = c.IdleUntil(now.Add(l.cfg.IdleTimeout), now) // the linger's, then the park's (conns)
	}
	return awaiting
}

// mayAnswer reports whether req is one the lane may answer: a GET or
// HEAD over HTTP/1.1 without a body, without Expect or Upgrade, whose
// connection stays open. Anything else is fasthttp's, which knows how.
func mayAnswer(req *fasthttp.Request) bool {
	h := &req.Header
	if !h.IsGet() && !h.IsHead() || !h.IsHTTP11() || h.ConnectionClose() {
		return false
	}
	if n := h.ContentLength(); n != 0 && n != -2 { // -2: neither Content-Length nor Transfer-Encoding
		return false
	}
	return len(h.Peek(fasthttp.HeaderExpect)) == 0 && len(h.Peek(fasthttp.HeaderUpgrade)) == 0
}

// prepare finishes the answer as fasthttp's Server does after its
// handler, and reports whether the connection closes after it.
func (l *Lane) prepare(ctx *fasthttp.RequestCtx) bool {
	resp := &ctx.Response
	if ctx.IsHead() {
		resp.SkipBody = true
	}
	if len(resp.Header.Server()) == 0 && l.cfg.Name != "" {
		resp.Header.SetServer(l.cfg.Name)
	}
	closeConn := resp.Header.ConnectionClose() || l.stopping.Load()
	if closeConn {
		resp.Header.SetConnectionClose()
	}
	return closeConn
}

// write sends ctx's answer through bw, which writes to c, within the
// write timeout from now.
func (l *Lane) write(c *conns.Conn, ctx *fasthttp.RequestCtx, bw *bufio.Writer, now time.Time) bool {
	if l.cfg.WriteTimeout > 0 && c.SetWriteDeadline(now.Add(l.cfg.WriteTimeout)) != nil {
		return false
	}
	bw.Reset(c)
	err := ctx.Response.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	return err == nil
}

func (l *Lane) buffers() *buffers {
	if b, ok := l.bufs.Get().(*buffers); ok {
		return b
	}
	b := &buffers{}
	b.br = bufio.NewReaderSize(&b.src, 4096)
	size := l.cfg.WriteBufferSize
	if size <= 0 {
		size = 4096
	}
	b.bw = bufio.NewWriterSize(nil, size)
	return b
}
