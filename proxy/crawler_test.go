package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestIsCrawlerKnowsThePluginsAgents(t *testing.T) {
	for ua, want := range map[string]bool{
		"lscache_runner":                   true,
		"lscache_runner Mobile iPhone":     true,
		"lscache_walker":                   true,
		"Mozilla/5.0 (X11; Linux x86_64)":  false,
		"Mozilla/5.0 lscache_runner":       false, // the plugin puts its name first
		"":                                 false,
		"LSCACHE_RUNNER":                   false,
		"lscache_runne":                    false,
		"Googlebot/2.1 (+lscache_walker)":  false,
		"lscache_walker/1.0 (compatible)":  true,
		"lscache_runnerMobile iPhone Safa": true,
	} {
		if got := isCrawler([]byte(ua)); got != want {
			t.Errorf("isCrawler(%q) = %v, want %v", ua, got, want)
		}
	}
}

// fixedLoad is an upstream pool whose use the test sets.
type fixedLoad struct{ busy, capacity int }

func (f *fixedLoad) Load() (int, int) { return f.busy, f.capacity }

func TestCrawlerBudgetSpendsOnlySpareCapacity(t *testing.T) {
	load := &fixedLoad{busy: 0, capacity: 4}
	b := newCrawlerBudget(&Crawler{MaxMisses: 2, MaxBusy: 50, RetryAfter: 1500 * time.Millisecond})
	b.gauge = load
	if b.retryAfter != "2" {
		t.Fatalf("Retry-After %q for 1.5s, want whole seconds rounded up", b.retryAfter)
	}
	if !b.take() || !b.take() {
		t.Fatal("an idle upstream refused the crawler its first two slots")
	}
	if b.take() {
		t.Fatal("a third crawler miss went upstream with max_misses 2")
	}
	b.give()
	load.busy = 2 // half the workers busy: max_busy 50 is reached
	if b.take() {
		t.Fatal("a crawler miss went upstream with the upstream at max_busy")
	}
	load.busy = 1
	if !b.take() {
		t.Fatal("a crawler miss was refused below max_busy with a slot free")
	}
	if n := b.upstream.Load(); n != 2 {
		t.Fatalf("%d slots held, want 2: a refusal must give its slot back", n)
	}
}

func TestCrawlerWithNoMissesGetsOnlyHits(t *testing.T) {
	b := newCrawlerBudget(&Crawler{MaxMisses: 0, MaxBusy: 100, RetryAfter: time.Second})
	if b.take() {
		t.Fatal("max_misses 0 let a crawler miss go upstream")
	}
}

// blockingOrigin holds requests to /slow until the test releases them;
// everything else it answers at once, cacheable.
type blockingOrigin struct {
	*testOrigin
	entered chan string
	release chan struct{}
	once    sync.Once
}

func newBlockingOrigin(t *testing.T) *blockingOrigin {
	b := &blockingOrigin{entered: make(chan string, 16), release: make(chan struct{})}
	b.testOrigin = newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow") {
			b.entered <- r.URL.Path
			<-b.release
		}
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, "page "+r.URL.Path)
	})
	t.Cleanup(b.unblock)
	return b
}

func (b *blockingOrigin) unblock() { b.once.Do(func() { close(b.release) }) }

// crawlerConfig is a proxy's config in front of o whose origin takes
// conns requests at once, with the crawler budget c.
func crawlerConfig(o *blockingOrigin, conns int, c *Crawler) Config {
	cfg := testConfig(o.URL)
	cfg.Origin.MaxConns, cfg.Origin.MaxQueue = conns, conns
	cfg.Default.Crawler = c
	return cfg
}

// crawlerProxy serves crawlerConfig and returns its base URL.
func crawlerProxy(t *testing.T, o *blockingOrigin, conns int, c *Crawler) string {
	_, base := startProxy(t, crawlerConfig(o, conns, c))
	return base
}

// getAsync gets url in the background; the reply arrives on the channel.
func getAsync(t *testing.T, url string, hdr ...string) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- reply{status: -1, body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		ch <- reply{resp.StatusCode, string(b), resp.Header.Get("Cache-Status"), resp.Header}
	}()
	return ch
}

const crawlerUA = "lscache_runner Mobile iPhone"

func TestCrawlerMissRefusedWhileVisitorsLoadTheOrigin(t *testing.T) {
	o := newBlockingOrigin(t)
	base := crawlerProxy(t, o, 4, &Crawler{MaxMisses: 2, MaxBusy: 50, RetryAfter: 10 * time.Second})
	if r := get(t, base+"/cached"); r.status != 200 {
		t.Fatalf("warming /cached: %d", r.status)
	}
	v1, v2 := getAsync(t, base+"/slow/1"), getAsync(t, base+"/slow/2")
	<-o.entered
	<-o.entered // two of four origin connections busy: max_busy 50 reached

	r := get(t, base+"/page", "User-Agent", crawlerUA)
	if r.status != 503 || r.header.Get("Retry-After") != "10" || r.header.Get("X-LiteSpeed-Cache") != "miss" {
		t.Fatalf("crawler miss on a loaded origin: %d, Retry-After %q, X-LiteSpeed-Cache %q",
			r.status, r.header.Get("Retry-After"), r.header.Get("X-LiteSpeed-Cache"))
	}
	if hit := get(t, base+"/cached", "User-Agent", crawlerUA); hit.status != 200 || hit.cacheStatus != "ramjet; hit" {
		t.Fatalf("crawler hit on a loaded origin: %d %q", hit.status, hit.cacheStatus)
	}
	// A visitor is served meanwhile, and the crawler had not filled /page.
	if vr := get(t, base+"/page"); vr.status != 200 || vr.cacheStatus != "ramjet; fwd=miss; stored" {
		t.Fatalf("visitor beside a refused crawler: %d %q", vr.status, vr.cacheStatus)
	}
	o.unblock()
	for _, v := range []<-chan reply{v1, v2} {
		if vr := <-v; vr.status != 200 {
			t.Fatalf("visitor of the slow page: %d %s", vr.status, vr.body)
		}
	}
	// Idle: the crawler's miss is filled, and the next visitor hits.
	if cr := get(t, base+"/other", "User-Agent", crawlerUA); cr.status != 200 || cr.cacheStatus != "ramjet; fwd=miss; stored" {
		t.Fatalf("crawler miss on an idle origin: %d %q", cr.status, cr.cacheStatus)
	}
	if vr := get(t, base+"/other"); vr.cacheStatus != "ramjet; hit" {
		t.Fatalf("visitor after the crawler: %q", vr.cacheStatus)
	}
}

func TestCrawlerMissesPerSiteAreBounded(t *testing.T) {
	o := newBlockingOrigin(t)
	base := crawlerProxy(t, o, 64, &Crawler{MaxMisses: 1, MaxBusy: 100, RetryAfter: time.Second})
	c1 := getAsync(t, base+"/slow/crawled", "User-Agent", "lscache_walker")
	<-o.entered // the crawler's one slot is upstream
	if r := get(t, base+"/page", "User-Agent", "lscache_walker"); r.status != 503 || r.header.Get("Retry-After") != "1" {
		t.Fatalf("second crawler miss with max_misses 1: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	if r := get(t, base+"/page"); r.status != 200 {
		t.Fatalf("visitor: %d", r.status)
	}
	o.unblock()
	if r := <-c1; r.status != 200 {
		t.Fatalf("first crawler miss: %d %s", r.status, r.body)
	}
	// Its slot is back once its answer is out.
	if r := get(t, base+"/page2", "User-Agent", "lscache_walker"); r.status != 200 {
		t.Fatalf("crawler miss after the first finished: %d", r.status)
	}
}

func TestCrawlerBudgetOutlastsAReload(t *testing.T) {
	o := newBlockingOrigin(t)
	cfg := crawlerConfig(o, 64, &Crawler{MaxMisses: 1, MaxBusy: 100, RetryAfter: time.Second})
	p, base := startProxy(t, cfg)
	c1 := getAsync(t, base+"/slow/crawled", "User-Agent", crawlerUA)
	<-o.entered
	if err := p.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if r := get(t, base+"/page", "User-Agent", crawlerUA); r.status != 503 {
		t.Fatalf("a reload gave the crawler a second slot: %d", r.status)
	}
	o.unblock()
	if r := <-c1; r.status != 200 {
		t.Fatalf("the crawler miss held across the reload: %d", r.status)
	}
	if r := get(t, base+"/page", "User-Agent", crawlerUA); r.status != 200 {
		t.Fatalf("the slot was not given back across the reload: %d", r.status)
	}
}
