package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/purge"
)

// A gap leaves every page stale at once; their refreshes go to the origin
// at most maxGapRefreshes at a time, and every visitor meanwhile is
// answered from the stale copy at once.
func TestGapRefreshesAreBoundedAndVisitorsGetTheStaleCopy(t *testing.T) {
	const pages = 3 * maxGapRefreshes
	var held, most atomic.Int64
	var filled atomic.Bool // pages are answered at once until filled
	release := make(chan struct{})
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if filled.Load() {
			n := held.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-release
			held.Add(-1)
		}
		w.Header().Set("Cache-Control", "max-age=600")
		io.WriteString(w, "page "+r.URL.Path)
	})
	defer close(release)
	p, base := startProxy(t, testConfig(o.URL))
	for i := range pages {
		if r := get(t, fmt.Sprintf("%s/p%d", base, i)); r.status != 200 {
			t.Fatalf("filling /p%d: %d", i, r.status)
		}
	}
	filled.Store(true)
	p.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindAll, Soft: true}}, Gap: true, Grace: time.Minute})

	var wg sync.WaitGroup
	for i := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := get(t, fmt.Sprintf("%s/p%d", base, i))
			if r.status != 200 || !strings.Contains(r.cacheStatus, "fwd=stale") || r.body != fmt.Sprintf("page /p%d", i) {
				t.Errorf("/p%d after the gap: %d %q %q, want the stale copy", i, r.status, r.cacheStatus, r.body)
			}
		}()
	}
	wg.Wait() // every visitor answered while the refreshes are held
	testbed.WaitFor(t, 10*time.Second, "the refreshes started to reach the origin", func() bool { return held.Load() >= maxGapRefreshes })
	if m := most.Load(); m == 0 || m > maxGapRefreshes {
		t.Errorf("%d refreshes at the origin at once, want 1 to %d", m, maxGapRefreshes)
	}
}
