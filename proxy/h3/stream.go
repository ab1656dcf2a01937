package h3

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// stream is one request and its response, on the goroutine serving it.
// Streams, their RequestCtx and their buffers are pooled.
type stream struct {
	c   *conn
	qs  *quic.Stream
	ctx *fasthttp.RequestCtx
	fr  frameReader
	dec fieldDecoder
	enc fieldEncoder
	out []byte // the response's HEADERS frame (and a small body), written at once
	// fields are the response's header fields as enc takes them.
	fields streamctx.Fields
	// standin is ctx.Conn(): the stream's addresses, TLS state and
	// transport.
	standin streamConn
	// answering: writeResponse began; no interim response may follow.
	answering bool
	// early: the stream opened before the handshake completed (0-RTT).
	early bool
	body  requestBody
	// bodyErr is the request body's protocol error (a length other than
	// content-length, a malformed frame) as the handler met it: the
	// stream is reset with its code instead of answered.
	bodyErr error

	declared  int64  // content-length, -1 when not sent
	received  int64  // body bytes read
	dataLeft  uint64 // of the DATA frame being read
	bodyDone  bool   // the request body ended (or there is none)
	fieldSize int    // the field section's size as SETTINGS_MAX_FIELD_SECTION_SIZE counts it
}

const (
	readBufSize = 4 << 10
	// smallBody: a body up to this size is copied behind the headers
	// and leaves in one write; larger ones are written from where they
	// are, with no copy.
	smallBody = 16 << 10
	// fieldOverhead is what RFC 9114 §4.2.2 counts per field besides
	// its name and value.
	fieldOverhead = 32
)

var streamPool = sync.Pool{New: func() any {
	st := &stream{out: make([]byte, 0, 1024)}
	st.body.st = st
	st.standin.st = st
	st.fr.buf = make([]byte, readBufSize)
	return st
}}

func (s *Server) acquireStream(c *conn, qs *quic.Stream) *stream {
	st := streamPool.Get().(*stream)
	st.c, st.qs = c, qs
	st.standin.Conn = c.addrs
	st.ctx = s.ctxs.Get(&st.standin)
	st.fr.reset(qs, st.fr.buf)
	st.declared = -1
	return st
}

func (s *Server) releaseStream(st *stream) {
	s.ctxs.Put(st.ctx)
	buf := st.fr.buf
	if cap(buf) > readBufSize*4 {
		buf = make([]byte, readBufSize) // a large header's buffer is not kept
	}
	out := st.out[:0]
	if cap(out) > smallBody*4 {
		out = nil
	}
	st.fields.Reset()
	*st = stream{body: st.body, dec: st.dec, enc: st.enc, out: out, fields: st.fields, standin: st.standin}
	st.standin.Conn = streamctx.Conn{} // keeps no connection reachable from the pool
	st.fr.buf = buf
	streamPool.Put(st)
}

// Serve runs one request stream on a worker: request, 0-RTT check,
// handler, response.
func (st *stream) Serve() {
	c, qs, early := st.c, st.qs, st.early
	s := c.s
	defer func() {
		s.streams.Add(-1)
		c.streamDone()
		s.wg.Done()
	}()
	defer s.releaseStream(st)
	if s.cfg.IdleTimeout > 0 {
		_ = qs.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout)) // a failure shows in the read
	}
	status, err := st.readRequest()
	if err != nil {
		st.abort(err)
		return
	}
	if !st.bodyDone {
		_ = qs.SetReadDeadline(time.Time{}) // a body streams for as long as the connection lives
	}
	if status != 0 {
		st.ctx.Response.SetStatusCode(status)
	} else {
		if early && !st.wait0RTT() {
			qs.CancelRead(errRequestRejected)
			qs.CancelWrite(errRequestRejected)
			return
		}
		s.handler(st.ctx)
		if st.bodyErr != nil {
			st.abort(st.bodyErr) // RFC 9114 §4.1.2: a malformed request is a stream error, not an answer
			return
		}
	}
	if err := st.writeResponse(); err != nil {
		if st.bodyErr != nil { // the body was read while the answer streamed
			st.abort(st.bodyErr)
			return
		}
		qs.CancelWrite(errInternal) // the client must not take a cut body for a whole one
	}
	if !st.bodyDone || !st.fr.atEOF() {
		discardRest(qs)
	}
}

// discardRest reads away what is left of a request the answer did not
// need, when it is short and already sent (an oversized header, a small
// unread body), as a lingering close does on TCP; a longer or slower one
// is stopped (RFC 9114 §4.1.2). quic-go's client reports a STOP_SENDING
// that races the complete answer as an error on reading that answer.
func discardRest(qs *quic.Stream) {
	_ = qs.SetReadDeadline(time.Now().Add(50 * time.Millisecond)) // a failure shows in the read
	if _, err := io.CopyN(io.Discard, qs, 64<<10); !errors.Is(err, io.EOF) {
		qs.CancelRead(errNoError)
	}
}

// abort ends a stream for a malformed request: a stream error resets
// it, a connection error closes the connection.
func (st *stream) abort(err error) {
	var he *h3Error
	switch {
	case errors.As(err, &he) && he.conn:
		st.c.fail(he.code, he.msg)
	case errors.As(err, &he):
		st.c.s.stats.Reset.Add(1)
		st.qs.CancelRead(quic.StreamErrorCode(he.code))
		st.qs.CancelWrite(quic.StreamErrorCode(he.code))
	default: // the stream or connection failed: nothing to answer
		st.qs.CancelWrite(errRequestIncomplete)
	}
}

// wait0RTT holds a request that came as 0-RTT data (its stream opened
// before the handshake completed) until the handshake completes, unless
// it is safe to replay (GET or HEAD without a body), and reports whether
// it may be served. Served early, it carries Early-Data: 1 to the origin
// (RFC 8470 §5.1), which may answer 425.
func (st *stream) wait0RTT() bool {
	qc := st.c.qc
	h := &st.ctx.Request.Header
	if (h.IsGet() || h.IsHead()) && st.bodyDone {
		st.c.s.stats.EarlyAccepted.Add(1)
		h.SetBytesKV(hdrEarlyData, one)
		return true
	}
	st.c.s.stats.EarlyRejected.Add(1)
	select {
	case <-qc.HandshakeComplete():
		return true
	case <-qc.Context().Done():
		return false
	}
}

var (
	hdrEarlyData = []byte("Early-Data")
	one          = []byte("1")
)

// readRequest reads the request's HEADERS frame into st.ctx. It returns
// a status to answer with at once (431 for a field section over the
// limit), or an error for a malformed request.
func (st *stream) readRequest() (int, error) {
	f := &st.fr
	for {
		typ, n, err := f.header()
		switch {
		case err == io.EOF:
			return 0, streamError(errRequestIncomplete, "stream ended before HEADERS")
		case err != nil:
			return 0, err
		case typ == frameHeaders:
			return st.readHeaders(n)
		case typ == frameData:
			return 0, connError(errFrameUnexpected, "DATA before HEADERS")
		case reservedOnRequest(typ):
			return 0, connError(errFrameUnexpected, "frame not allowed on a request stream")
		}
		if err := f.skip(n); err != nil { // an unknown (reserved, greasing) frame
			return 0, err
		}
	}
}

// readHeaders decodes a HEADERS frame of n bytes into the request.
func (st *stream) readHeaders(n uint64) (int, error) {
	limit := st.c.s.cfg.MaxHeaderBytes
	if n > uint64(limit) {
		st.bodyDone = true // not read: the answer says why
		return fasthttp.StatusRequestHeaderFieldsTooLarge, nil
	}
	if int(n) > len(st.fr.buf) {
		st.fr.grow(int(n))
	}
	p, err := st.fr.payload(int(n))
	if err != nil {
		return 0, err
	}
	if err := st.dec.decode(p); err != nil {
		return 0, connError(0x200, "QPACK: "+err.Error()) // QPACK_DECOMPRESSION_FAILED
	}
	if err := st.fillRequest(); err != nil {
		return 0, err
	}
	if st.fieldSize > limit {
		st.bodyDone = true
		return fasthttp.StatusRequestHeaderFieldsTooLarge, nil
	}
	return 0, nil
}

// fillRequest builds st.ctx's request from the decoded fields and checks
// that they make a valid one (RFC 9114 §4.3.1).
func (st *stream) fillRequest() error {
	h := &st.ctx.Request.Header
	var method, path, scheme, authority, host []byte
	pseudoDone := false
	st.fieldSize = 0
	for _, fd := range st.dec.fields {
		st.fieldSize += len(fd.name) + len(fd.value) + fieldOverhead
		if len(fd.name) > 0 && fd.name[0] == ':' {
			if pseudoDone {
				return malformed
			}
			var dst *[]byte
			switch string(fd.name) {
			case ":method":
				dst = &method
			case ":path":
				dst = &path
			case ":scheme":
				dst = &scheme
			case ":authority":
				dst = &authority
			default:
				return malformed
			}
			if *dst != nil {
				return malformed
			}
			*dst = fd.value
			continue
		}
		pseudoDone = true
		if !validName(fd.name) {
			return malformed
		}
		switch string(fd.name) {
		case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade":
			return malformed
		case "te":
			if string(fd.value) != "trailers" {
				return malformed
			}
		case "content-length":
			n, err := strconv.ParseUint(string(fd.value), 10, 63)
			if err != nil || st.declared >= 0 && int64(n) != st.declared {
				return malformed
			}
			st.declared = int64(n)
			continue // set with the body below
		case "host":
			// RFC 9114 4.3.1: a Host must agree with :authority, and
			// two Hosts with each other; the first is the one used.
			if authority != nil && !bytes.EqualFold(authority, fd.value) || host != nil && !bytes.EqualFold(host, fd.value) {
				return malformed
			}
			host = fd.value
			continue
		}
		h.AddBytesKV(fd.name, fd.value)
	}
	if len(method) == 0 || len(scheme) == 0 || len(path) == 0 || path[0] != '/' && !(string(path) == "*" && string(method) == "OPTIONS") {
		return malformed // CONNECT (no :path) is not served
	}
	if authority == nil {
		authority = host
	}
	h.SetMethodBytes(method)
	h.SetRequestURIBytes(path)
	h.SetHostBytes(authority)
	st.setBody()
	return nil
}

// setBody decides whether the request has a body: a declared length
// says; without one, GET and HEAD have none (whatever DATA follows is
// not read), and other methods have one unless the stream has ended.
func (st *stream) setBody() {
	h := &st.ctx.Request.Header
	switch {
	case st.declared == 0,
		st.declared < 0 && (h.IsGet() || h.IsHead()),
		st.declared < 0 && st.fr.atEOF():
		st.bodyDone = true
		return
	}
	st.ctx.Request.SetBodyStream(&st.body, int(st.declared)) // -1: length unknown
}

// validName reports whether a field name is lower case and a token
// (RFC 9114 §4.2: upper case makes the request malformed).
func validName(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if 'A' <= c && c <= 'Z' || c <= ' ' || c >= 0x7f || c == ':' {
			return false
		}
	}
	return true
}

// grow makes the read buffer hold at least n bytes, keeping what it
// holds.
func (f *frameReader) grow(n int) {
	buf := make([]byte, n+64)
	f.end = copy(buf, f.buf[f.off:f.end])
	f.off, f.buf = 0, buf
}

// requestBody is the request body as the handler reads it: the payload
// of the stream's DATA frames, trailers read and dropped.
type requestBody struct{ st *stream }

var (
	errBodyLength = streamError(errMessage, "body length differs from content-length")
	malformed     = streamError(errMessage, "malformed request")
)

// Read reads the body, keeping a protocol error for serveStream, which
// resets the stream with its code whatever the handler made of it.
func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.st.readBody(p)
	if err != nil && err != io.EOF {
		var he *h3Error
		if errors.As(err, &he) {
			b.st.bodyErr = err
		}
	}
	return n, err
}

func (st *stream) readBody(p []byte) (int, error) {
	for st.dataLeft == 0 {
		if st.bodyDone {
			return 0, io.EOF
		}
		if err := st.nextData(); err != nil {
			return 0, err
		}
	}
	n, err := st.fr.read(p[:min(uint64(len(p)), st.dataLeft)])
	st.dataLeft -= uint64(n)
	st.received += int64(n)
	if st.declared >= 0 && st.received > st.declared {
		return n, errBodyLength
	}
	if err == io.EOF {
		err = errShortFrame
	}
	return n, err
}

// nextData reads frame headers until a DATA frame with a payload (its
// length in st.dataLeft) or the end of the body.
func (st *stream) nextData() error {
	f := &st.fr
	typ, n, err := f.header()
	switch {
	case err == io.EOF:
		st.bodyDone = true
		if st.declared >= 0 && st.received != st.declared {
			return errBodyLength
		}
		return io.EOF
	case err != nil:
		return err
	case typ == frameData:
		st.dataLeft = n
		return nil
	case typ == frameHeaders: // trailers: dropped, and nothing may follow
		if err := f.skip(n); err != nil {
			return err
		}
		if !f.fill(1) && f.err == io.EOF {
			st.bodyDone = true
			return st.nextData() // checks the length
		}
		return streamError(errFrameUnexpected, "frame after trailers")
	case reservedOnRequest(typ):
		return connError(errFrameUnexpected, "frame not allowed on a request stream")
	}
	return f.skip(n)
}

var _ io.Reader = (*requestBody)(nil)
