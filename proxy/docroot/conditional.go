package docroot

import (
	"bytes"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/byterange"
)

// notModified evaluates If-None-Match, or without it If-Modified-Since
// (RFC 9110 13.2.2), for GET and HEAD.
func notModified(h *fasthttp.RequestHeader, etag string, mod time.Time) bool {
	if inm := h.Peek("If-None-Match"); len(inm) > 0 {
		return etagListMatch(inm, etag)
	}
	ims := h.Peek("If-Modified-Since")
	if len(ims) == 0 {
		return false
	}
	t, err := http.ParseTime(string(ims))
	return err == nil && !mod.Truncate(time.Second).After(t)
}

// etagListMatch is the weak comparison of If-None-Match: "*" or any
// listed tag equal to etag ignoring W/.
func etagListMatch(list []byte, etag string) bool {
	if bytes.Equal(bytes.TrimSpace(list), []byte("*")) {
		return true
	}
	for len(list) > 0 {
		var tag []byte
		tag, list, _ = bytes.Cut(list, []byte(","))
		tag = bytes.TrimPrefix(bytes.TrimSpace(tag), []byte("W/"))
		if string(tag) == etag {
			return true
		}
	}
	return false
}

// byteRange is the range of the file a request selects (byterange.Select),
// with If-Range checked against the file's validators.
func byteRange(h *fasthttp.RequestHeader, etag string, mod time.Time, size int64) (start, n int64, code int) {
	return byterange.Select(h.Peek("Range"), ifRange(h.Peek("If-Range"), etag, mod), size)
}

// ifRange reports whether a range may be served: no If-Range, or one
// naming the current strong ETag or Last-Modified date.
func ifRange(v []byte, etag string, mod time.Time) bool {
	if len(v) == 0 {
		return true
	}
	if v[0] == '"' {
		return string(v) == etag
	}
	t, err := http.ParseTime(string(v))
	return err == nil && mod.Truncate(time.Second).Equal(t)
}
