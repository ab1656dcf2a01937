package proxy

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// requestBody is what the WAF read of a client's request body: the whole
// body, or (past the site's limit) its first bytes, which go upstream
// before the rest of the stream.
type requestBody struct {
	taken  bool
	whole  bool
	prefix []byte
	buf    *[]byte // pooled; nil when prefix is not pooled
}

var errBodyUninspected = errors.New("proxy: request body past the WAF's limit, passed uninspected")

// bodyBufs are the buffers small bodies are read into; larger ones are
// allocated for the request and dropped, so that the pool holds no
// upload-sized buffers.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// takeBody reads the request body up to the site's limit. A longer one
// is refused (413), or with BodyPass left to stream on uninspected
// (errBodyUninspected).
func (r *request) takeBody(w *WAF) error {
	ctx := r.ctx
	if !ctx.Request.IsBodyStream() {
		r.body = requestBody{taken: true, whole: true, prefix: ctx.Request.Body()}
		return nil
	}
	limit := w.BodyLimit
	if limit <= 0 {
		limit = 8 << 20
	}
	limit = min(limit, waf.MaxBody)
	if n := ctx.Request.Header.ContentLength(); int64(n) > limit {
		if w.BodyPass {
			return errBodyUninspected // nothing read: the stream goes on as it is
		}
		return fasthttp.ErrBodyTooLarge
	}
	r.body.taken = true
	bp := bodyBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	if n := ctx.Request.Header.ContentLength(); n > cap(buf) {
		bodyBufs.Put(bp)
		bp, buf = nil, make([]byte, 0, n)
	}
	buf, whole, err := readUpTo(ctx.RequestBodyStream(), buf, limit+1)
	r.body.prefix, r.body.buf, r.body.whole = buf, bp, whole
	if bp != nil {
		*bp = buf[:0] // grown: keep the larger buffer if it stays small
	}
	switch {
	case err != nil:
		return err
	case whole:
		return nil
	case w.BodyPass:
		return errBodyUninspected
	}
	return fasthttp.ErrBodyTooLarge
}

// readUpTo appends from rd to buf until EOF (whole) or n bytes.
func readUpTo(rd io.Reader, buf []byte, n int64) ([]byte, bool, error) {
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):min(int64(cap(buf)), n)]
		k, err := rd.Read(room)
		buf = buf[:len(buf)+k]
		if errors.Is(err, io.EOF) {
			return buf, true, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
	return buf, false, nil
}

// upstreamBody is the body a forwarded request sends: what the WAF read,
// then whatever of the stream it left; ok is false when it read nothing.
func (r *request) upstreamBody() (io.Reader, int, bool) {
	if !r.body.taken {
		return nil, 0, false
	}
	if r.body.whole {
		return bytes.NewReader(r.body.prefix), len(r.body.prefix), true
	}
	return io.MultiReader(bytes.NewReader(r.body.prefix), r.ctx.RequestBodyStream()), r.ctx.Request.Header.ContentLength(), true
}
