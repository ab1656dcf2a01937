package docroot

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// FuzzByteRange: whatever the Range header says, a 206 names a non-empty
// span inside the file, and nothing else is answered but 200, 206 or 416.
func FuzzByteRange(f *testing.F) {
	for _, s := range []string{"bytes=0-0", "bytes=5-", "bytes=-3", "bytes=-0", "bytes=10-2", "bytes=0-1,3-4", "bytes=99999999999999999999-", "bytes= 1 - 2", "items=1-2", ""} {
		f.Add(s, int64(10))
	}
	mod := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, spec string, size int64) {
		if size < 0 {
			size = -size
		}
		var h fasthttp.RequestHeader
		h.Set("Range", spec)
		start, n, code := byteRange(&h, `"e"`, mod, size)
		switch code {
		case fasthttp.StatusOK:
			if start != 0 || n != size {
				t.Fatalf("200 with span %d+%d of %d", start, n, size)
			}
		case fasthttp.StatusPartialContent:
			if start < 0 || n <= 0 || start+n > size {
				t.Fatalf("Range %q on %d bytes: 206 with span %d+%d", spec, size, start, n)
			}
		case fasthttp.StatusRequestedRangeNotSatisfiable:
		default:
			t.Fatalf("status %d", code)
		}
	})
}
