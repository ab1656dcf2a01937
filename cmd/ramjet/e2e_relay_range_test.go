package main_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
)

// A cacheable answer over max_object_size is relayed, not stored, with
// the bytes ramjet read of it before it knew. A client's range is cut
// from it only when its length is known: one of unknown length (PHP's
// chunked output) was cut as if what had been read were the whole body,
// and the last bytes asked for came from the middle of the page.
func TestRangeOfAnAnswerOverMaxObjectSizeIsTheRightBytes(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "cache:\n  max_object_size: 4KiB\n")
	const size = 20000
	tests := []struct {
		name, query  string
		status       int
		contentRange string
	}{
		{"length known", "", http.StatusPartialContent, fmt.Sprintf("bytes %d-%d/%d", size-10, size-1, size)},
		{"length unknown", "&chunked=1", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := fmt.Sprintf("%s/e/over-limit-range?size=%d%s&%s", rj.URL, size, tt.query, hq("Cache-Control: max-age=60"))
			r := get(t, c, u, "Range: bytes=-10")
			mustStatus(t, r, tt.status, "GET with Range: bytes=-10")
			if got := r.Header.Get("Content-Range"); got != tt.contentRange {
				t.Errorf("Content-Range %q, want %q", got, tt.contentRange)
			}
			whole := get(t, c, u) // the page again, not stored: the origin's same padding
			mustStatus(t, whole, http.StatusOK, "GET")
			if len(whole.Body) != size {
				t.Fatalf("whole page %d bytes, want %d", len(whole.Body), size)
			}
			want := whole.Body[size-10:]
			if tt.status == http.StatusOK {
				want = whole.Body
			}
			// The first lines (id, headers seen) differ per response; the
			// padding at the end does not.
			if got := r.Body; len(got) != len(want) || !bytes.Equal(got[max(len(got)-10, 0):], want[len(want)-10:]) {
				t.Errorf("got %d bytes ending %q, want %d ending %q", len(got), got[max(len(got)-10, 0):], len(want), want[len(want)-10:])
			}
			if cs := r.CacheStatus(); cs.Stored || cs.Hit {
				t.Errorf("Cache-Status %q, want the answer relayed, not stored", cs.Raw)
			}
		})
	}
}
