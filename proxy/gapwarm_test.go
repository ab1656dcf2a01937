package proxy

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/purge"
)

// A gap refreshes the pages it left stale by itself, retrying while the
// origin fails: a page nobody asks for during the grace is fresh again
// when the origin comes back, not gone.
func TestGapWarmsThePagesItLeftStaleUntilTheOriginAnswers(t *testing.T) {
	const pages = 40
	var down atomic.Bool
	var version atomic.Int64
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Cache-Control", "max-age=600")
		fmt.Fprintf(w, "v%d %s", version.Load(), r.URL.Path)
	})
	p, base := startProxy(t, testConfig(o.URL))
	for i := range pages {
		if r := get(t, fmt.Sprintf("%s/p%d", base, i)); r.body != fmt.Sprintf("v0 /p%d", i) {
			t.Fatalf("filling /p%d: %q", i, r.body)
		}
	}
	version.Store(1)
	down.Store(true)
	p.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindAll, Soft: true}}, Gap: true, Grace: time.Minute})
	testbed.WaitFor(t, 10*time.Second, "the warm-up's first tries", func() bool { return o.hits.Load() >= pages+1 })
	down.Store(false)
	testbed.WaitFor(t, 10*time.Second, "every page refreshed by the warm-up", func() bool {
		left := 0
		p.cache.EachGapped(func(uint64, string, *cache.Entry) bool { left++; return true })
		return left == 0
	})
	for i := range pages {
		if r := get(t, fmt.Sprintf("%s/p%d", base, i)); r.body != fmt.Sprintf("v1 /p%d", i) || r.cacheStatus != "ramjet; hit" {
			t.Errorf("/p%d after the warm-up: %q %q, want a hit of v1", i, r.cacheStatus, r.body)
		}
	}
}
