package h2

import (
	"io"
	"sync"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"
)

// stream is one request and its response. Streams and their RequestCtx
// are pooled: a request costs neither once the pools are warm. The
// fields below ctx are guarded by conn.mu.
type stream struct {
	c    *conn
	id   uint32
	ctx  *fasthttp.RequestCtx
	body requestBody // the request body stream the handler reads
	// finishOnly: the response is already in ctx (an Inline hit that
	// had to wait for flow control), the worker only writes it.
	finishOnly bool

	cond        sync.Cond // on conn.mu: body bytes, window, reset, conn end
	sendWindow  int64
	recvWindow  int64  // what the client may still send on this stream
	unacked     int64  // consumed body bytes not yet returned to the client
	declared    int64  // content-length, -1 when not sent
	received    int64  // body bytes received
	buf         []byte // received body bytes, read from off
	off         int
	remoteDone  bool   // END_STREAM received: the body is complete
	reset       bool   // RST_STREAM sent or received
	headersSent bool   // writeResponse progress
	pending     []byte // body bytes not yet sent
}

var streamPool = sync.Pool{New: func() any {
	st := new(stream)
	st.body.st = st
	return st
}}

func (s *Server) acquireStream(c *conn, id uint32) *stream {
	st := streamPool.Get().(*stream)
	st.c, st.id = c, id
	st.cond.L = &c.mu
	st.ctx = s.ctxs.Get(c.standin)
	st.sendWindow = c.peerWindow // only serve, the caller, changes it
	st.recvWindow, st.declared = streamWindow, -1
	return st
}

func (s *Server) releaseStream(st *stream) {
	s.ctxs.Put(st.ctx)
	buf := st.buf
	if cap(buf) > 64<<10 {
		buf = nil // an upload's buffer is not kept
	}
	*st = stream{body: st.body, buf: buf[:0]}
	streamPool.Put(st)
}

// run hands st to a worker, counted until it finishes (Shutdown waits).
func (s *Server) run(st *stream) {
	s.streams.Add()
	streamctx.Shared.Run(st)
}

// Serve runs on a worker: the handler, then the response.
func (st *stream) Serve() {
	c := st.c
	s := c.s
	if !st.finishOnly {
		c.s.handler(st.ctx)
	}
	c.mu.Lock()
	done := c.writeResponse(st, true)
	c.mu.Unlock()
	if !done {
		c.writeBodyStream(st)
	}
	c.closeStream(st)
	s.releaseStream(st)
	s.streams.Done()
}

// closeStream forgets a finished stream: unread body bytes go back to
// the connection window, a client still sending the body is told to
// stop, and a GOAWAY'd connection without streams left closes.
func (c *conn) closeStream(st *stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, st.id)
	c.connUnacked += int64(len(st.buf) - st.off)
	c.sendConnUpdate()
	if !st.remoteDone && !st.reset {
		_ = c.fr.WriteRSTStream(st.id, http2.ErrCodeNo) // errors surface through c.err
	}
	c.flushIfIdle()
	c.wakeIfDone()
}

// requestBody is the request body as the handler reads it; consumed
// bytes are returned to the client's windows.
type requestBody struct{ st *stream }

func (b *requestBody) Read(p []byte) (int, error) {
	st := b.st
	c := st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(st.buf) == st.off && !st.remoteDone && !st.reset && c.err == nil {
		st.cond.Wait()
	}
	switch {
	case len(st.buf) > st.off:
	case st.reset:
		return 0, errStreamReset
	case c.err != nil:
		return 0, c.err
	default:
		return 0, io.EOF
	}
	n := copy(p, st.buf[st.off:])
	st.off += n
	drained := st.off == len(st.buf)
	if drained {
		st.buf, st.off = st.buf[:0], 0
	}
	st.unacked += int64(n)
	c.connUnacked += int64(n)
	if st.unacked >= windowBatch || drained && st.unacked > 0 {
		if !st.remoteDone {
			_ = c.fr.WriteWindowUpdate(st.id, uint32(st.unacked)) // errors surface through c.err
			st.recvWindow += st.unacked
		}
		st.unacked = 0
		c.sendConnUpdate()
		c.flushIfIdle()
	}
	return n, nil
}

var _ io.Reader = (*requestBody)(nil)
