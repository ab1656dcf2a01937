package proxy

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Crawler is a site's budget for the LiteSpeed Cache plugin's crawler
// (user agents lscache_runner, lscache_walker): its hits are served as
// anyone's, but what it would send upstream (a miss, a pass) goes only
// while the upstream has capacity to spare, so warming the cache never
// slows a visitor down. A refused request is answered 503 with
// Retry-After at once: it never waits in a queue ahead of visitors.
type Crawler struct {
	// MaxMisses bounds the site's crawler requests upstream at once; 0
	// sends none (every crawler miss is refused).
	MaxMisses int
	// MaxBusy is the percentage of the upstream's capacity (PHP workers,
	// or origin connections) in use, visitors' waiting requests counted,
	// at which crawler misses are refused; 1 to 100.
	MaxBusy int
	// RetryAfter is what a refused crawler request is told to wait.
	RetryAfter time.Duration
}

// loadGauge is an upstream pool's use: phppool.Pool, origin.Pool.
type loadGauge interface {
	Load() (busy, capacity int)
}

// crawlerBudget is a site's Crawler at run time.
type crawlerBudget struct {
	Crawler
	// gauge is the site's upstream pool; nil: only MaxMisses bounds the
	// crawler (a site serving static files only).
	gauge      loadGauge
	retryAfter string
	// upstream counts the crawler requests upstream now: the site
	// state's, kept across reloads, once bound.
	upstream *atomic.Int32
}

func newCrawlerBudget(c *Crawler) *crawlerBudget {
	if c == nil {
		return nil
	}
	secs := max(int64((c.RetryAfter+time.Second-1)/time.Second), 1)
	return &crawlerBudget{Crawler: *c, retryAfter: strconv.FormatInt(secs, 10), upstream: new(atomic.Int32)}
}

// The user agents of the LiteSpeed Cache plugin's crawler: it sends
// "lscache_runner" followed by the simulated device ("lscache_runner
// Mobile iPhone"); lscache_walker is its older name.
var crawlerAgents = [...][]byte{[]byte("lscache_runner"), []byte("lscache_walker")}

// isCrawler reports whether ua is the plugin's crawler. Claiming to be
// it only ever gets a client less: the same hits, fewer misses.
func isCrawler(ua []byte) bool {
	for _, a := range crawlerAgents {
		if bytes.HasPrefix(ua, a) {
			return true
		}
	}
	return false
}

// take reserves an upstream slot for a crawler request: false when the
// site's crawler has MaxMisses upstream already, or its upstream is at
// MaxBusy percent of its capacity.
func (b *crawlerBudget) take() bool {
	if n := b.upstream.Add(1); int(n) > b.MaxMisses {
		b.upstream.Add(-1)
		return false
	}
	if !spare(b.gauge, b.MaxBusy) {
		b.upstream.Add(-1)
		return false
	}
	return true
}

// spare reports whether g, an upstream's pool (nil: none to ask), has
// capacity to spare: less than maxBusy percent of it in use, visitors'
// waiting requests counted. The crawler and the warm-up after purges
// (warmrun.go) send their requests only then.
func spare(g loadGauge, maxBusy int) bool {
	if g == nil {
		return true
	}
	busy, capacity := g.Load()
	return busy*100 < capacity*maxBusy
}

// give returns a slot take reserved.
func (b *crawlerBudget) give() { b.upstream.Add(-1) }

// stageCrawler decides whether a page request that lookup left to fill
// may go upstream now. Anyone but the crawler may (a fragment's page was
// admitted: fragments do not run it). A crawler request that may holds a
// slot until releaseCrawler; one that may not is answered 503 with
// Retry-After.
func stageCrawler(r *request) verdict {
	b := r.s.crawler
	if b == nil || !isCrawler(r.header().UserAgent()) {
		return proceed
	}
	if b.take() {
		r.crawlerSlot = true
		return proceed
	}
	r.p.metrics.crawlerRefused.Inc()
	r.s.state.crawlerRefused.Inc()
	r.refuseCrawler(b.retryAfter)
	return answered
}

// crawlerPart is the crawler stage's part of the request.
type crawlerPart struct {
	// crawlerSlot: the request holds one of its site's crawler slots
	// until release (releaseCrawler).
	crawlerSlot bool
}

func (c *crawlerPart) reset() { *c = crawlerPart{} }

// releaseCrawler gives back the slot stageCrawler took, if any.
func (r *request) releaseCrawler() {
	if r.crawlerSlot {
		r.crawlerSlot = false
		r.s.crawler.give()
	}
}

// refuseCrawler answers a crawler request the budget refused. The
// plugin's crawler reads "X-LiteSpeed-Cache: miss" as a miss to crawl
// again on its next run; without the field it would count the URL
// towards its blocklist.
func (r *request) refuseCrawler(retryAfter string) {
	ctx := r.ctx
	ctx.Response.Reset()
	ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
	ctx.Response.Header.Set("Retry-After", retryAfter)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Response.Header.Set("X-LiteSpeed-Cache", "miss")
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString("Service Unavailable\n")
	r.res.written = true
}

// setGauge makes g (not nil) the pool whose load admits the site's
// crawler and its warm-up.
func (s *site) setGauge(g loadGauge) {
	s.gauge = g
	if s.crawler != nil {
		s.crawler.gauge = g
	}
}
