package h3

import (
	"io"
	"sync"
	"time"

	"github.com/quic-go/quic-go/quicvarint"
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// writeResponse writes st.ctx's response: a HEADERS frame, then the body
// in DATA frames (one for a body in memory, one per read of a body
// stream), then the stream's end.
func (st *stream) writeResponse() error {
	st.answering = true
	resp := &st.ctx.Response
	head := st.ctx.IsHead()
	status := resp.StatusCode()
	noBody := head || streamctx.Bodyless(status)
	st.encodeHeaders(resp, status, head)
	st.out = appendFrameHeader(st.out[:0], frameHeaders, uint64(len(st.enc.b)))
	st.out = append(st.out, st.enc.b...)
	switch {
	case noBody:
		if resp.IsBodyStream() {
			_ = resp.CloseBodyStream() // not sent; its close error is not the client's concern
		}
	case resp.IsBodyStream():
		if err := st.write(st.out); err != nil {
			return err
		}
		st.out = st.out[:0]
		if err := st.writeBodyStream(resp); err != nil {
			return err
		}
	default:
		body := resp.Body()
		if len(body) == 0 {
			break
		}
		st.out = appendFrameHeader(st.out, frameData, uint64(len(body)))
		if len(body) <= smallBody {
			st.out = append(st.out, body...)
			break
		}
		if err := st.write(st.out); err != nil {
			return err
		}
		st.out = st.out[:0]
		if err := st.write(body); err != nil {
			return err
		}
	}
	if len(st.out) > 0 {
		if err := st.write(st.out); err != nil {
			return err
		}
	}
	return st.qs.Close() // FIN: the response is complete
}

// write sends p within the write timeout. quic-go queues what the flow
// control windows allow and blocks for the rest.
func (st *stream) write(p []byte) error {
	if wt := st.c.s.cfg.WriteTimeout; wt > 0 {
		_ = st.qs.SetWriteDeadline(time.Now().Add(wt)) // a failure shows in the write
	}
	_, err := st.qs.Write(p)
	return err
}

// dataHeaderRoom is the space kept before each read of a body stream for
// its DATA frame header (type and a length up to 2^30: 1 + 4 bytes), so
// that header and payload leave in one write.
const dataHeaderRoom = 8

var copyBufs = sync.Pool{New: func() any { b := make([]byte, dataHeaderRoom+32<<10); return &b }}

// writeBodyStream copies a body stream into DATA frames, each read
// written at once so that what a streaming handler flushed reaches the
// client without waiting for more. A failing body stream fails the
// response: the caller resets the stream.
func (st *stream) writeBodyStream(resp *fasthttp.Response) error {
	body := resp.BodyStream()
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var err error
	for err == nil {
		var n int
		n, err = body.Read(buf[dataHeaderRoom:])
		if n > 0 {
			h := quicvarint.Len(frameData) + quicvarint.Len(uint64(n))
			start := dataHeaderRoom - h
			appendFrameHeader(buf[start:start], frameData, uint64(n))
			if werr := st.write(buf[start : dataHeaderRoom+n]); werr != nil {
				_ = resp.CloseBodyStream() // the client is gone; its close error adds nothing
				return werr
			}
		}
	}
	cerr := resp.CloseBodyStream()
	if err != io.EOF {
		return err
	}
	_ = cerr // a reader's close error after a whole body is not the client's concern
	return nil
}

// encodeHeaders QPACK-encodes resp's status and fields as HTTP/2 and
// HTTP/3 send them (streamctx.Fields).
func (st *stream) encodeHeaders(resp *fasthttp.Response, status int, head bool) {
	e := &st.enc
	e.start()
	e.status(status)
	st.fields.Response(resp, status, head)
	for name, v := range st.fields.All() {
		e.field(name, v)
	}
}
