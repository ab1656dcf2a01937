package docroot

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
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

// byteRange reads a single "bytes=" range. It answers 200 (the whole
// file) for no, several or unparsable ranges and for a failed If-Range,
// 206 with the start and length of a satisfiable one, and 416 when the
// range starts past the end.
func byteRange(h *fasthttp.RequestHeader, etag string, mod time.Time, size int64) (start, n int64, code int) {
	whole := func() (int64, int64, int) { return 0, size, fasthttp.StatusOK }
	spec, ok := bytes.CutPrefix(bytes.TrimSpace(h.Peek("Range")), []byte("bytes="))
	if !ok || bytes.IndexByte(spec, ',') >= 0 || !ifRange(h.Peek("If-Range"), etag, mod) {
		return whole()
	}
	first, last, ok := bytes.Cut(bytes.TrimSpace(spec), []byte("-"))
	if !ok {
		return whole()
	}
	if len(first) == 0 { // suffix: the last N bytes
		suffix, err := strconv.ParseInt(string(last), 10, 64)
		if err != nil || suffix < 0 {
			return whole()
		}
		if suffix == 0 || size == 0 {
			// Nothing to select: an empty file has no last bytes.
			return 0, 0, fasthttp.StatusRequestedRangeNotSatisfiable
		}
		suffix = min(suffix, size)
		return size - suffix, suffix, fasthttp.StatusPartialContent
	}
	start, err := strconv.ParseInt(string(first), 10, 64)
	if err != nil || start < 0 {
		return whole()
	}
	end := size - 1
	if len(last) > 0 {
		if end, err = strconv.ParseInt(string(last), 10, 64); err != nil || end < start {
			return whole()
		}
		end = min(end, size-1)
	}
	if start >= size {
		return 0, 0, fasthttp.StatusRequestedRangeNotSatisfiable
	}
	return start, end - start + 1, fasthttp.StatusPartialContent
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
