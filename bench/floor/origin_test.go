package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// testOrigin is an origin with a small page, a 40 KB one (large enough for
// FLOOR_SENDFILE) and a broken one, counting the requests for each path.
type testOrigin struct {
	*httptest.Server
	mu    sync.Mutex
	asked map[string]int
}

const pageType = "text/html; charset=UTF-8"

var (
	smallBody = bytes.Repeat([]byte("<p>floor</p>\n"), 56) // 728 B, as the bench's 725 B page
	bigBody   = func() []byte {
		b := make([]byte, 40_000)
		for i := range b {
			b[i] = byte('a' + i*7%26) // not a repeat of a short run: a misplaced chunk shows
		}
		return b
	}()
)

func newTestOrigin(t *testing.T) *testOrigin {
	t.Helper()
	o := &testOrigin{asked: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

func (o *testOrigin) serve(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.asked[r.URL.RequestURI()]++
	o.mu.Unlock()
	switch r.URL.Path {
	case "/small":
		w.Header().Set("Content-Type", pageType)
		w.Write(smallBody)
	case "/big":
		w.Header().Set("Content-Type", pageType)
		w.Write(bigBody)
	default:
		http.Error(w, "broken", http.StatusInternalServerError)
	}
}

func (o *testOrigin) times(target string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.asked[target]
}

// newTestStore is a store on o, closed when the test ends.
func newTestStore(t *testing.T, o *testOrigin, sendfile bool) *store {
	t.Helper()
	s := newStore(o.URL, sendfile)
	t.Cleanup(func() {
		if err := s.close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}
