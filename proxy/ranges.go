package proxy

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/byterange"
)

var hdrContentRange = []byte("Content-Range")

// answerRange turns the answer in resp into the part a GET's Range header
// selects from a 200 body of size bytes (the cache fetches and keeps
// whole bodies, so ranges are cut here, as nginx's range filter and
// Varnish do). It reports the span and code set: 206 with Content-Range,
// 416 with "bytes */size", or ok false when the whole body is the answer.
// If-Range is checked against the response's own validators.
func answerRange(req *fasthttp.RequestHeader, resp *fasthttp.Response, etag, lastModified []byte, size int64) (start, n int64, ok bool) {
	spec := peekCanonical(req, "Range")
	if len(spec) == 0 || !req.IsGet() || resp.StatusCode() != fasthttp.StatusOK || size < 0 {
		return 0, 0, false
	}
	start, n, code := byterange.Select(spec, ifRange(peekCanonical(req, "If-Range"), etag, lastModified), size)
	if code == fasthttp.StatusOK {
		return 0, 0, false
	}
	var buf [64]byte
	resp.SetStatusCode(code)
	resp.Header.SetCanonical(hdrContentRange, byterange.ContentRange(buf[:0], start, n, size))
	return start, n, true
}

// ifRange reports whether If-Range (absent, a strong ETag, or a date)
// names the current representation: an ETag compared strongly, a date
// exactly as Last-Modified (RFC 9110 13.1.5).
func ifRange(v, etag, lastModified []byte) bool {
	switch {
	case len(v) == 0:
		return true
	case v[0] == '"':
		return len(etag) > 0 && etag[0] == '"' && bytes.Equal(v, etag)
	default:
		return len(lastModified) > 0 && bytes.Equal(v, lastModified)
	}
}
