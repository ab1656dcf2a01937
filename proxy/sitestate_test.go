package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/purge"
)

// sharedSites are a.test (shared cache) and b.test (its own cacheSize);
// /big/… pages are 64KiB.
func sharedSites(t *testing.T, cacheSize int64) (*Proxy, Config) {
	t.Helper()
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=300")
		if r.Header.Get("X-Probe") != "" {
			w.Header().Set("Cache-Control", "no-store")
		}
		w.Header().Set("X-LiteSpeed-Tag", "home")
		w.Header().Set("Content-Type", "application/octet-stream") // not compressed
		if strings.HasPrefix(r.URL.Path, "/big/") {
			w.Write(bytes.Repeat([]byte{'x'}, 64<<10))
			return
		}
		io.WriteString(w, r.Host+r.URL.Path)
	})
	cfg := testConfig(o.URL)
	a, b := cfg.Default, cfg.Default
	a.Names, b.Names = []string{"a.test"}, []string{"b.test"}
	b.CacheSize = cacheSize
	cfg.Sites = []Site{a, b}
	return newTestProxy(t, cfg, nil), cfg
}

// metricsOf reads p's metrics as series → value.
func metricsOf(t *testing.T, p *Proxy) map[string]float64 {
	t.Helper()
	var buf bytes.Buffer
	p.Metrics().WritePrometheus(&buf)
	m := map[string]float64{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		name, v, ok := line[:max(i, 0)], line[i+1:], i > 0
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", sc.Text(), err)
		}
		m[name] = f
	}
	return m
}

func TestASiteWithItsOwnCacheSizeEvictsOnlyItsOwnPages(t *testing.T) {
	p, _ := sharedSites(t, 1<<20)
	warm(t, p, "a.test", "/big/1", "a.test", "/big/2", "a.test", "/p")
	for i := range 64 { // 4MiB through a 1MiB share
		warm(t, p, "b.test", fmt.Sprintf("/big/crawl-%d", i))
	}
	for _, path := range []string{"/big/1", "/big/2", "/p"} {
		if !cached(t, p, "a.test", path) {
			t.Errorf("a.test%s evicted by b.test's crawl", path)
		}
	}
	b := p.sites.lookup("b.test")
	if b.share == nil {
		t.Fatal("b.test has no cache of its own")
	}
	b.share.Resize(1 << 20) // settles otter's eviction before reading the size
	if got := b.share.Bytes(); got > 1<<20 {
		t.Errorf("b.test's share holds %d bytes, over its 1MiB", got)
	}
	if b.share.Len() == 0 {
		t.Error("b.test's share holds nothing: its pages are not stored there")
	}
	// The probes' misses must store nothing: their fills would evict the
	// pages still to be looked at (which ones the share keeps is
	// TinyLFU's choice).
	served := 0
	for i := range 64 {
		ctx := requestCtx("GET", "b.test", fmt.Sprintf("/big/crawl-%d", i), false)
		ctx.Request.Header.Set("X-Probe", "1")
		p.ServeFastHTTP(ctx)
		if string(ctx.Response.Header.Peek("Cache-Status")) == "ramjet; hit" {
			served++
		}
	}
	if served == 0 {
		t.Error("none of b.test's pages is served from its share")
	}
}

func TestSiteCountersAreKeptApart(t *testing.T) {
	p, _ := sharedSites(t, 0)
	warm(t, p, "a.test", "/1", "a.test", "/1", "a.test", "/1", "b.test", "/1", "unlisted.test", "/1")
	p.ServeFastHTTP(requestCtx("POST", "b.test", "/form", false))
	p.ServeFastHTTP(requestCtx("GET", "b.test", "/purge-source", false))
	p.Purge(purgeAllOf("b.test"))
	m := metricsOf(t, p)
	want := map[string]float64{
		`ramjet_site_hits_total{site="a.test"}`:      2,
		`ramjet_site_misses_total{site="a.test"}`:    1,
		`ramjet_site_cache_objects{site="a.test"}`:   1,
		`ramjet_site_hits_total{site="b.test"}`:      0,
		`ramjet_site_misses_total{site="b.test"}`:    2,
		`ramjet_site_passes_total{site="b.test"}`:    1,
		`ramjet_site_purges_total{site="b.test"}`:    1,
		`ramjet_site_purges_total{site="a.test"}`:    0,
		`ramjet_site_misses_total{site="_default"}`:  1,
		`ramjet_site_cache_objects{site="_default"}`: 1,
	}
	for series, v := range want {
		if got, ok := m[series]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, v)
		}
	}
	if got := m[`ramjet_site_cache_bytes{site="a.test"}`]; got <= 0 {
		t.Errorf(`ramjet_site_cache_bytes{site="a.test"} = %v, want the bytes of its page`, got)
	}
}

func TestReloadKeepsSiteCountersAndResizesOrDropsShares(t *testing.T) {
	p, cfg := sharedSites(t, 2<<20)
	warm(t, p, "b.test", "/1", "b.test", "/1")
	share := p.sites.lookup("b.test").share

	cfg.Sites[1].CacheSize = 1 << 20
	if err := p.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	st := p.sites.lookup("b.test")
	if st.share != share || st.shareSize != 1<<20 {
		t.Fatalf("after a resize: share %p size %d, want the same cache %p at 1MiB", st.share, st.shareSize, share)
	}
	if !cached(t, p, "b.test", "/1") {
		t.Error("b.test's page lost by a reload that only resized its share")
	}
	if got := metricsOf(t, p)[`ramjet_site_hits_total{site="b.test"}`]; got != 2 {
		t.Errorf("b.test hits after the reload = %v, want 2 (counted on across it)", got)
	}

	cfg.Sites[1].CacheSize = 0
	cfg.Sites = cfg.Sites[1:] // a.test leaves the config
	if err := p.Reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if st.share != nil {
		t.Error("b.test kept its share after its cache_size was removed")
	}
	if cached(t, p, "b.test", "/1") {
		t.Error("b.test/1 served from a share it no longer has")
	}
	if !cached(t, p, "b.test", "/1") {
		t.Error("b.test/1 not cached in the shared cache after the share went")
	}
	m := metricsOf(t, p)
	if _, ok := m[`ramjet_site_hits_total{site="a.test"}`]; ok {
		t.Error("a.test's series outlived its hosts[] entry")
	}
}

func TestPurgesReachTheSitesOwnCaches(t *testing.T) {
	tests := []struct {
		name    string
		cmd     purge.Command
		bPurged bool
	}{
		{"the operator's purge of everything", purge.Command{Targets: []purge.Target{{Kind: purge.KindAll}}}, true},
		{"the operator's tag purge", purge.Command{Targets: []purge.Target{{Kind: purge.KindTag, Value: "home"}}}, true},
		{"b.test's own purge of everything", purgeAllOf("b.test"), true},
		{"a.test's purge of everything", purgeAllOf("a.test"), false},
		{"a.test's purge of b.test's URL", purge.Command{Site: "a.test", Host: "a.test",
			Targets: []purge.Target{{Kind: purge.KindURL, Value: "http://b.test/1"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := sharedSites(t, 1<<20)
			warm(t, p, "b.test", "/1")
			p.Purge(tt.cmd)
			if cached(t, p, "b.test", "/1") == tt.bPurged {
				t.Errorf("b.test/1 (in its own cache) cached=%v after %s", !tt.bPurged, tt.name)
			}
		})
	}
}

func purgeAllOf(site string) purge.Command {
	return purge.Command{Site: site, Host: site, Targets: []purge.Target{{Kind: purge.KindAll}}}
}
