package proxy

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/purge"
)

// warmOrigin answers every page cacheably (tag "all", vary on X-Device)
// and records, once armed, the paths asked for in order and the most
// requests it had at once; a request to /slow waits for release.
type warmOrigin struct {
	*testOrigin
	mu       sync.Mutex
	armed    bool
	asked    []string // path and X-Device, "/p3 phone"
	cookies  int      // armed requests that carried a Cookie
	now, top atomic.Int32
	release  chan struct{}
	free     func() // closes release, once
	delay    time.Duration
}

func newWarmOrigin(t *testing.T) *warmOrigin {
	w := &warmOrigin{release: make(chan struct{})}
	w.free = sync.OnceFunc(func() { close(w.release) })
	t.Cleanup(w.free) // a failed test's slow request ends too
	w.testOrigin = newTestOrigin(t, func(rw http.ResponseWriter, r *http.Request) {
		n := w.now.Add(1)
		defer w.now.Add(-1)
		for top := w.top.Load(); n > top && !w.top.CompareAndSwap(top, n); top = w.top.Load() {
		}
		if r.URL.Path == "/slow" {
			<-w.release
		}
		w.mu.Lock()
		if w.armed {
			w.asked = append(w.asked, r.URL.Path+" "+r.Header.Get("X-Device"))
			if r.Header.Get("Cookie") != "" {
				w.cookies++
			}
		}
		d := w.delay
		w.mu.Unlock()
		time.Sleep(d) // a page that takes time to make
		rw.Header().Set("Cache-Control", "max-age=600")
		rw.Header().Set("X-LiteSpeed-Tag", "all")
		if r.Header.Get("X-Device") != "" {
			rw.Header().Set("Vary", "X-Device")
		}
		rw.Header().Set("ETag", `"`+r.URL.Path+`"`)
		fmt.Fprintf(rw, "page %s %s", r.URL.Path, r.Header.Get("X-Device"))
	})
	return w
}

// arm starts recording; what was recorded so far is forgotten.
func (w *warmOrigin) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed, w.asked, w.cookies = true, nil, 0
	w.top.Store(w.now.Load())
}

func (w *warmOrigin) seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.asked)
}

func warmConfig(originURL string, w *Warm) Config {
	cfg := lscacheConfig(originURL)
	cfg.Default.Warm = w
	return cfg
}

// visit fills path and asks for it again until it has been asked for n
// times.
func visit(t *testing.T, base, path string, n int, hdr ...string) {
	t.Helper()
	for range n {
		get(t, base+path, hdr...)
	}
}

var purgeEverything = purge.Command{Targets: []purge.Target{{Kind: purge.KindAll}}}

func waitRuns(t *testing.T, p *Proxy, n float64) {
	t.Helper()
	testbed.WaitFor(t, 10*time.Second, "the warm runs", func() bool { return metricsOf(t, p)["ramjet_warm_runs_total"] >= n })
}

func TestWarmUpFetchesTheMostRequestedDroppedPagesFirst(t *testing.T) {
	o := newWarmOrigin(t)
	p, base := startProxy(t, warmConfig(o.URL, &Warm{Concurrency: 1, Rate: 1000, MaxEntries: 100, MaxBusy: 100}))
	for i := range 6 {
		visit(t, base, fmt.Sprintf("/p%d", i), 2+3*i) // /p5 the most requested
	}
	visit(t, base, "/once", 1) // filled, never asked for again
	o.arm()
	p.Purge(purgeEverything)
	waitRuns(t, p, 1)
	want := []string{"/p5 ", "/p4 ", "/p3 ", "/p2 ", "/p1 ", "/p0 "}
	if got := o.seen(); !slices.Equal(got, want) {
		t.Fatalf("the warm-up fetched %q, want %q", got, want)
	}
	for i := range 6 {
		if r := get(t, fmt.Sprintf("%s/p%d", base, i)); r.cacheStatus != "ramjet; hit" {
			t.Errorf("/p%d after the warm-up: %q, want a hit", i, r.cacheStatus)
		}
	}
}

func TestWarmUpKeepsOnlyMaxEntriesAndStaysWithinItsConcurrency(t *testing.T) {
	o := newWarmOrigin(t)
	p, base := startProxy(t, warmConfig(o.URL, &Warm{Concurrency: 2, Rate: 1000, MaxEntries: 5, MaxBusy: 100}))
	for i := range 12 {
		visit(t, base, fmt.Sprintf("/p%02d", i), 2+i)
	}
	o.mu.Lock()
	o.delay = 20 * time.Millisecond
	o.mu.Unlock()
	o.arm()
	p.Purge(purgeEverything)
	waitRuns(t, p, 1)
	got := o.seen()
	slices.Sort(got)
	if want := []string{"/p07 ", "/p08 ", "/p09 ", "/p10 ", "/p11 "}; !slices.Equal(got, want) {
		t.Fatalf("the warm-up fetched %q, want the 5 most requested %q", got, want)
	}
	if top := o.top.Load(); top > 2 {
		t.Fatalf("%d warm-up requests at the origin at once, want at most 2", top)
	}
	if m := metricsOf(t, p); m["ramjet_warm_dropped_total"] != 7 || m["ramjet_warm_fetches_total"] != 5 {
		t.Fatalf("dropped %v, fetched %v; want 7 and 5", m["ramjet_warm_dropped_total"], m["ramjet_warm_fetches_total"])
	}
}

// While the visitors keep the origin at max_busy, the warm-up waits;
// it goes on once they no longer need the capacity.
func TestWarmUpWaitsWhileVisitorsNeedTheOrigin(t *testing.T) {
	o := newWarmOrigin(t)
	cfg := warmConfig(o.URL, &Warm{Concurrency: 2, Rate: 1000, MaxEntries: 100, MaxBusy: 50})
	cfg.Origin.MaxConns = 2
	p, base := startProxy(t, cfg)
	visit(t, base, "/a", 3)
	visit(t, base, "/b", 3)
	slow := make(chan reply)
	go func() { slow <- get(t, base+"/slow") }() // a visitor holding 1 of 2: 50 % busy
	testbed.WaitFor(t, 10*time.Second, "the visitor at the origin", func() bool { return o.now.Load() == 1 })
	o.arm()
	p.Purge(purgeEverything)
	testbed.WaitFor(t, 10*time.Second, "the warm-up to yield", func() bool { return metricsOf(t, p)["ramjet_warm_yields_total"] >= 3 })
	if got := o.seen(); len(got) != 0 {
		t.Fatalf("the warm-up fetched %q while the visitor needed the origin", got)
	}
	o.free()
	<-slow
	waitRuns(t, p, 1)
	if got := o.seen(); len(got) != 3 || !slices.Contains(got, "/a ") || !slices.Contains(got, "/b ") {
		t.Fatalf("after the visitor: fetched %q, want /slow's answer, /a and /b", got)
	}
}

func TestWarmUpRefetchesTaggedAndSoftPurgedPagesInTheirVariants(t *testing.T) {
	o := newWarmOrigin(t)
	p, base := startProxy(t, warmConfig(o.URL, &Warm{Concurrency: 1, Rate: 1000, MaxEntries: 100, MaxBusy: 100}))
	visit(t, base, "/v", 4, "X-Device", "phone")
	visit(t, base, "/v", 3, "X-Device", "tablet")
	visit(t, base, "/soft", 2)
	o.arm()
	p.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindTag, Value: "all"}}})
	waitRuns(t, p, 1)
	if got, want := o.seen(), []string{"/v phone", "/v tablet", "/soft "}; !slices.Equal(got, want) {
		t.Fatalf("after a tag purge the warm-up fetched %q, want %q", got, want)
	}
	if r := get(t, base+"/v", "X-Device", "tablet"); r.cacheStatus != "ramjet; hit" || r.body != "page /v tablet" {
		t.Fatalf("the tablet variant after the warm-up: %q %q", r.cacheStatus, r.body)
	}
	o.arm()
	p.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindURL, Value: "/soft", Soft: true}}})
	waitRuns(t, p, 2)
	if got := o.seen(); !slices.Equal(got, []string{"/soft "}) {
		t.Fatalf("after a soft purge the warm-up fetched %q", got)
	}
	if r := get(t, base+"/soft"); r.cacheStatus != "ramjet; hit" {
		t.Fatalf("/soft after its soft purge's warm-up: %q, want a hit", r.cacheStatus)
	}
}

// A page chosen by a cookie is one visitor's: never fetched on their
// behalf. Nothing warmed carries a cookie.
func TestWarmUpLeavesCookieVariantsToTheirVisitors(t *testing.T) {
	o := newWarmOrigin(t)
	cfg := warmConfig(o.URL, &Warm{Concurrency: 1, Rate: 1000, MaxEntries: 100, MaxBusy: 100})
	cfg.Default.VaryCookies = []string{"lang"}
	p, base := startProxy(t, cfg)
	visit(t, base, "/c", 5, "Cookie", "lang=fr")
	visit(t, base, "/c", 2)
	o.arm()
	p.Purge(purgeEverything)
	waitRuns(t, p, 1)
	if got := o.seen(); !slices.Equal(got, []string{"/c "}) || o.cookies != 0 {
		t.Fatalf("fetched %q (%d with a cookie), want the plain /c only, without", got, o.cookies)
	}
}

// A purge of everything warms only the sites that warm: b.test's pages
// are its visitors' to fetch.
func TestWarmUpStaysWithinItsSite(t *testing.T) {
	o := newWarmOrigin(t)
	cfg := warmConfig(o.URL, nil)
	a, b := cfg.Default, cfg.Default
	a.Names, b.Names = []string{"a.test"}, []string{"b.test"}
	a.Warm = &Warm{Concurrency: 1, Rate: 1000, MaxEntries: 100, MaxBusy: 100}
	cfg.Sites = []Site{a, b}
	p := newTestProxy(t, cfg, nil)
	warm(t, p, "a.test", "/a", "a.test", "/a", "a.test", "/a", "b.test", "/b", "b.test", "/b", "b.test", "/b")
	o.arm()
	p.Purge(purgeEverything)
	waitRuns(t, p, 1)
	if got := o.seen(); !slices.Equal(got, []string{"/a "}) {
		t.Fatalf("fetched %q, want a.test's /a only", got)
	}
}

func TestWarmUpOffFetchesNothing(t *testing.T) {
	o := newWarmOrigin(t)
	p, base := startProxy(t, warmConfig(o.URL, nil))
	visit(t, base, "/p", 5)
	o.arm()
	p.Purge(purgeEverything)
	p.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindTag, Value: "all"}}})
	if r := get(t, base+"/p"); r.cacheStatus == "ramjet; hit" {
		t.Fatalf("/p after a purge without warm-up: %q", r.cacheStatus)
	}
	if got := o.seen(); len(got) != 1 || metricsOf(t, p)["ramjet_warm_candidates_total"] != 0 {
		t.Fatalf("fetched %q, want only the visitor's /p", got)
	}
}

func TestWarmListKeepsTheMostPopular(t *testing.T) {
	l := warmList{max: 3}
	for i, score := range []uint32{5, 1, 9, 3, 7, 2} {
		l.add(warmCandidate{key: fmt.Sprintf("k%d", i), score: score})
	}
	l.add(warmCandidate{key: "k0", score: 8}) // listed again, more popular now
	var got []string
	for c, ok := l.pop(); ok; c, ok = l.pop() {
		got = append(got, fmt.Sprintf("%s:%d", c.key, c.score))
	}
	if want := []string{"k2:9", "k0:8", "k4:7"}; !slices.Equal(got, want) || l.dropped != 3 {
		t.Fatalf("popped %q (dropped %d), want %q (dropped 3)", got, l.dropped, want)
	}
}

func TestPlainRequestRefusesCredentialsAndCookies(t *testing.T) {
	for _, tt := range []struct {
		name    string
		vary    cache.VarySpec
		variant string
		want    bool
	}{
		{"no vary", cache.VarySpec{}, "", true},
		{"header value", cache.VarySpec{Headers: []string{"x-device"}}, "phone\x00", true},
		{"no cookie value", cache.VarySpec{Headers: []string{"x-device"}, Cookies: []string{"lang"}}, "phone\x00\x00", true},
		{"cookie value", cache.VarySpec{Cookies: []string{"lang"}}, "fr\x00", false},
		{"authorization", cache.VarySpec{Headers: []string{"authorization"}}, "Basic eA==\x00", false},
		{"cookie header", cache.VarySpec{Headers: []string{"cookie"}}, "a=b\x00", false},
		{"htaccess variant", cache.VarySpec{Headers: []string{varyValueKey}}, "ismobile\x00", false},
		{"malformed", cache.VarySpec{Headers: []string{"x-device"}}, "phone", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := plainRequest(&tt.vary, tt.variant); got != tt.want {
				t.Fatalf("plainRequest = %v, want %v", got, tt.want)
			}
		})
	}
}

// The rate spaces the warm-up's fetches: 5 at 20 a second take at least
// the 4 intervals of 50 ms between them.
func TestWarmUpKeepsToItsRate(t *testing.T) {
	o := newWarmOrigin(t)
	p, base := startProxy(t, warmConfig(o.URL, &Warm{Concurrency: 4, Rate: 20, MaxEntries: 100, MaxBusy: 100}))
	for i := range 5 {
		visit(t, base, fmt.Sprintf("/p%d", i), 2)
	}
	o.arm()
	start := time.Now()
	p.Purge(purgeEverything)
	waitRuns(t, p, 1)
	if took := time.Since(start); took < 200*time.Millisecond || len(o.seen()) != 5 {
		t.Fatalf("5 fetches at 20/s took %v (%d fetched), want at least 200ms", took, len(o.seen()))
	}
}

// A reload that turns a site's warm-up off ends its run: what is left is
// its visitors'.
func TestWarmUpTurnedOffByAReloadLeavesTheRestToVisitors(t *testing.T) {
	o := newWarmOrigin(t)
	cfg := warmConfig(o.URL, &Warm{Concurrency: 1, Rate: 5, MaxEntries: 100, MaxBusy: 100})
	p, base := startProxy(t, cfg)
	for i := range 10 {
		visit(t, base, fmt.Sprintf("/p%d", i), 2)
	}
	o.arm()
	p.Purge(purgeEverything)
	testbed.WaitFor(t, 10*time.Second, "the first warm-up fetch", func() bool { return len(o.seen()) >= 1 })
	cfg.Default.Warm = nil
	if err := p.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	waitRuns(t, p, 1)
	m := metricsOf(t, p)
	left := m["ramjet_warm_abandoned_total"] + m["ramjet_warm_skipped_total"] // skipped: its turn came after the reload
	if got := len(o.seen()); got >= 10 || m["ramjet_warm_abandoned_total"] < 1 || left+m["ramjet_warm_fetches_total"] != 10 {
		t.Fatalf("after the reload: %d fetched, %v abandoned, %v skipped; want the rest left to visitors",
			got, m["ramjet_warm_abandoned_total"], m["ramjet_warm_skipped_total"])
	}
}
