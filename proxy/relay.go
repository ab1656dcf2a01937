package proxy

import (
	"bytes"
	"errors"
	"io"

	"github.com/valyala/fasthttp"
)

// errUnreadableESI: an ESI page that could not be assembled (too large,
// or in a coding ramjet cannot undo) is in a coding the client does not
// accept either.
var errUnreadableESI = errors.New("proxy: ESI page in a content coding neither ramjet nor the client can decode")

// relay answers with an upstream response the cache does not keep:
// assembled when it is an ESI page, else streamed. An ESI page that
// cannot be assembled goes as it came, but only to a client that can
// read its coding; any other gets 502, never a coding it did not accept.
func (r *request) relay(resp *fasthttp.Response, prefix, status []byte) {
	if r.s.ESI && !r.ctx.IsHead() && wantsESI(&resp.Header) {
		if len(prefix) == 0 {
			var done bool
			if done, prefix = r.relayAssembled(resp, status); done {
				return
			}
		}
		if !acceptsCodings(peekCanonical(&r.ctx.Request.Header, "Accept-Encoding"), resp.Header.ContentEncoding()) {
			releaseResponse(resp)
			r.p.writeError(r.ctx, errUnreadableESI)
			return
		}
	}
	streamResponse(r.ctx, r.s, resp, prefix, status)
}

// streamResponse relays an origin response the cache does not keep: the
// body is streamed, never buffered whole, and resp is released when the
// client has it (or the connection ends).
func streamResponse(ctx *fasthttp.RequestCtx, s *site, resp *fasthttp.Response, prefix []byte, status []byte) {
	out := &ctx.Response
	out.SetStatusCode(resp.StatusCode())
	named := resp.Header.Peek("Connection")
	for k, v := range resp.Header.All() {
		if len(named) > 0 && listed(named, k) {
			continue // a hop-by-hop field the Connection header names
		}
		switch s.classify(k) {
		case headerDrop:
		case headerInternal:
			if s.DebugHeaders {
				out.Header.AddBytesKV(k, v)
			}
		default:
			out.Header.AddBytesKV(k, v)
		}
	}
	out.Header.SetCanonical(hdrCacheStatus, status)
	size := resp.Header.ContentLength()
	if ctx.IsHead() {
		// The length the GET would have: a fill (a GET) relayed to a
		// HEAD client has its body here. An unknown length (the upstream
		// sent none) is left out, as nginx does, rather than stated as 0
		// or closing the connection.
		out.SkipBody = true
		if !resp.SkipBody && !resp.IsBodyStream() {
			size = len(resp.Body())
		}
		if size >= 0 {
			out.Header.SetContentLength(size)
		}
		releaseResponse(resp)
		return
	}
	var etag, lastModified []byte // If-Range's validators, only looked up for a range request
	if len(ctx.Request.Header.Peek("Range")) > 0 {
		etag, lastModified = resp.Header.Peek("ETag"), resp.Header.Peek("Last-Modified")
	}
	if !resp.IsBodyStream() {
		if start, n, ok := answerRange(&ctx.Request.Header, out, etag, lastModified, int64(len(resp.Body()))); ok {
			out.SetBody(resp.Body()[start : start+n])
			releaseResponse(resp)
			return
		}
		// Trade buffers instead of copying the body; both stay pooled.
		resp.SwapBody(out.SwapBody(resp.Body()))
		releaseResponse(resp)
		return
	}
	var body io.Reader = resp.BodyStream()
	if size < 0 {
		size = -1
	}
	// size is the whole body's, prefix included (it was read from this
	// very stream); a body of unknown length has no range cut from it.
	if start, n, ok := answerRange(&ctx.Request.Header, out, etag, lastModified, int64(size)); ok {
		relayPart(out, resp, body, prefix, start, n)
		return
	}
	if wt, ok := body.(fasthttp.BodyWriterTo); ok && len(prefix) == 0 && wt.SupportsBodyWriteTo() {
		out.SetBodyStream(&originBodyWriterTo{originBody{Reader: body, resp: resp}, wt}, size)
		return
	}
	if wt, ok := body.(io.WriterTo); ok && len(prefix) == 0 && size >= 0 {
		out.SetBodyStream(&originBodyCopier{originBody{Reader: body, resp: resp}, wt}, size)
		return
	}
	if len(prefix) > 0 {
		body = io.MultiReader(bytes.NewReader(prefix), body)
	}
	out.SetBodyStream(&originBody{Reader: body, resp: resp}, size)
}

// relayPart streams bytes [start, start+n) of prefix followed by body.
func relayPart(out *fasthttp.Response, resp *fasthttp.Response, body io.Reader, prefix []byte, start, n int64) {
	if n == 0 { // 416
		releaseResponse(resp)
		out.ResetBody()
		return
	}
	if len(prefix) > 0 {
		body = io.MultiReader(bytes.NewReader(prefix), body)
	}
	// Skipping reads and drops the bytes before the range: a stream cannot
	// seek. A failure shows as a short body, which drops the connection.
	_, _ = io.CopyN(io.Discard, body, start)
	out.SetBodyStream(&originBody{Reader: io.LimitReader(body, n), resp: resp}, int(n))
}

// originBodyWriterTo keeps the WriteTo of a body that writes in chunks of
// its own choosing (a PHP script's output as it arrives), which fasthttp
// then frames without cutting it into 4 KB pieces.
type originBodyWriterTo struct {
	originBody
	wt fasthttp.BodyWriterTo
}

func (b *originBodyWriterTo) WriteTo(w io.Writer) (int64, error) { return b.wt.WriteTo(w) }
func (b *originBodyWriterTo) SupportsBodyWriteTo() bool          { return true }

// originBodyCopier keeps the WriteTo of a body of known length that can
// send itself better than a copy loop (a docroot file: sendfile).
type originBodyCopier struct {
	originBody
	wt io.WriterTo
}

func (b *originBodyCopier) WriteTo(w io.Writer) (int64, error) { return b.wt.WriteTo(w) }

// originBody releases the origin response once fasthttp has written the
// body to the client, or given up on it.
type originBody struct {
	io.Reader
	resp *fasthttp.Response
}

func (b *originBody) Close() error {
	releaseResponse(b.resp)
	return nil
}
