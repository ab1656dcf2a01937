package byterange

import (
	"bytes"
	"strconv"

	"github.com/valyala/fasthttp"
)

// Select reads a single "bytes=" range for a body of size bytes. It
// answers 200 (the whole body) for no, several or unparsable ranges and
// when ifRange is false (a failed If-Range), 206 with the start and length
// of a satisfiable range, and 416 when it selects nothing.
func Select(spec []byte, ifRange bool, size int64) (start, n int64, code int) {
	whole := func() (int64, int64, int) { return 0, size, fasthttp.StatusOK }
	spec, ok := bytes.CutPrefix(bytes.TrimSpace(spec), []byte("bytes="))
	if !ok || bytes.IndexByte(spec, ',') >= 0 || !ifRange {
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
			// Nothing to select: an empty body has no last bytes.
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

// ContentRange appends the Content-Range value of a 206 (start, n of
// size) or, with n == 0, of a 416.
func ContentRange(dst []byte, start, n, size int64) []byte {
	dst = append(dst, "bytes "...)
	if n == 0 {
		dst = append(dst, '*')
	} else {
		dst = strconv.AppendInt(dst, start, 10)
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, start+n-1, 10)
	}
	dst = append(dst, '/')
	return strconv.AppendInt(dst, size, 10)
}
