package byterange

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func TestSelect(t *testing.T) {
	tests := []struct {
		name, spec string
		ifRange    bool
		size       int64
		start, n   int64
		code       int
	}{
		{"no range", "", true, 10, 0, 10, 200},
		{"first byte", "bytes=0-0", true, 10, 0, 1, 206},
		{"open end", "bytes=5-", true, 10, 5, 5, 206},
		{"end past the size is cut", "bytes=5-99", true, 10, 5, 5, 206},
		{"suffix", "bytes=-3", true, 10, 7, 3, 206},
		{"suffix longer than the body", "bytes=-30", true, 10, 0, 10, 206},
		{"zero suffix selects nothing", "bytes=-0", true, 10, 0, 0, 416},
		{"start past the end", "bytes=10-", true, 10, 0, 0, 416},
		{"suffix of an empty body", "bytes=-5", true, 0, 0, 0, 416},
		{"several ranges: the whole body", "bytes=0-1,3-4", true, 10, 0, 10, 200},
		{"reversed: the whole body", "bytes=5-2", true, 10, 0, 10, 200},
		{"other unit: the whole body", "items=1-2", true, 10, 0, 10, 200},
		{"failed If-Range: the whole body", "bytes=0-0", false, 10, 0, 10, 200},
		{"number too large: the whole body", "bytes=99999999999999999999-", true, 10, 0, 10, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, n, code := Select([]byte(tt.spec), tt.ifRange, tt.size)
			if start != tt.start || n != tt.n || code != tt.code {
				t.Fatalf("got %d+%d %d, want %d+%d %d", start, n, code, tt.start, tt.n, tt.code)
			}
		})
	}
}

func TestContentRange(t *testing.T) {
	if got := string(ContentRange(nil, 5, 3, 10)); got != "bytes 5-7/10" {
		t.Fatalf("206: %q", got)
	}
	if got := string(ContentRange(nil, 0, 0, 10)); got != "bytes */10" {
		t.Fatalf("416: %q", got)
	}
}

// FuzzSelect: whatever the Range header says, a 206 names a non-empty
// span inside the body, and nothing else is answered but 200, 206 or 416.
func FuzzSelect(f *testing.F) {
	for _, s := range []string{"bytes=0-0", "bytes=5-", "bytes=-3", "bytes=-0", "bytes=10-2", "bytes=0-1,3-4", "bytes=99999999999999999999-", "bytes= 1 - 2", "items=1-2", ""} {
		f.Add(s, int64(10))
	}
	f.Fuzz(func(t *testing.T, spec string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 { // MinInt64
			size = 0
		}
		start, n, code := Select([]byte(spec), true, size)
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
