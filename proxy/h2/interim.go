package h2

import (
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// SendInterim sends an interim (1xx) response on the HTTP/2 stream ctx
// serves, ahead of its final one: a HEADERS frame without END_STREAM
// (RFC 9113 §8.1). It reports false, having sent nothing, when ctx is no
// stream of this connection, the status is not one an HTTP/2 server may
// send as interim (101 is not), or the final response has started.
func (sc *streamConn) SendInterim(ctx *fasthttp.RequestCtx, status int, fields [][2][]byte) bool {
	c := sc.owner
	if c == nil || !streamctx.Interim(status) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.streamOf(ctx)
	if st == nil || st.headersSent || st.reset || c.err != nil {
		return false
	}
	f := fieldsPool.Get().(*streamctx.Fields)
	f.Interim(fields)
	c.writeHeaderBlock(st.id, status, f, false)
	fieldsPool.Put(f)
	c.flush(false) // the point of a hint is to arrive before the answer
	return true
}

// streamOf finds the stream whose handler holds ctx. mu must be held.
func (c *conn) streamOf(ctx *fasthttp.RequestCtx) *stream {
	for _, st := range c.streams {
		if st.ctx == ctx {
			return st
		}
	}
	return nil
}
