package proxy

import (
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A fan-out gap (cache/gap.go) leaves every page stale for its grace, then
// gone: a page nobody asked for meanwhile would be fetched again by its
// next visitor, who gets an error if the origin is down just then — for a
// page ramjet had. So a gap also warms what it left stale: each plain page
// (the variant a request of its URL alone selects) of a proxied site is
// refreshed in the background, as a visitor's stale hit would refresh it,
// at most maxGapRefreshes at a time (the visitors' refreshes share the
// bound), coalesced with any refresh of the same page, and tried again
// every gapRetry while the origin fails, until the grace is over. Pages of
// docroot sites, and variants chosen by cookies or other request fields,
// are refreshed by their visitors only: a request made up from the key
// would not be theirs.

// gapRetry is how long the warm-up waits before trying the pages whose
// refresh failed again.
const gapRetry = 500 * time.Millisecond

// warmGap starts the warm-up of what a gap of grace left stale in c; the
// Proxy's Close waits for it.
func (p *Proxy) warmGap(c *cache.Cache, grace time.Duration) {
	if !p.startBackground() {
		return
	}
	until := time.Now().Add(grace)
	go func() {
		defer p.bg.Done()
		for time.Now().Before(until) && p.warmGapOnce(c) {
			t := time.NewTimer(min(gapRetry, time.Until(until)))
			select {
			case <-t.C:
			case <-p.stop:
				t.Stop()
				return
			}
		}
	}()
}

// warmGapOnce refreshes every page of c still stale from the gap and
// reports whether one is left to try again (its refresh failed).
func (p *Proxy) warmGapOnce(c *cache.Cache) bool {
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	c.EachGapped(func(h uint64, key string, e *cache.Entry) bool {
		select {
		case p.gapRefreshes <- struct{}{}: // a token: at most maxGapRefreshes at once
		case <-p.stop:
			return false
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-p.gapRefreshes }()
			if !p.warmPage(c, h, key, e) {
				failed.Store(true)
			}
		}()
		return true
	})
	wg.Wait()
	return failed.Load()
}

// warmPage refreshes the plain page e stored under key (hash h), unless
// its site is not a proxied one of c or another refresh of it runs. It
// reports false when the refresh failed.
func (p *Proxy) warmPage(c *cache.Cache, h uint64, key string, e *cache.Entry) bool {
	scheme, rest, ok := strings.Cut(key, "://")
	host, _, _ := strings.Cut(rest, "/")
	if !ok || scheme != "http" && scheme != "https" || host == "" {
		return true // not a page's key (an ESI inline's)
	}
	g := p.enter()
	defer g.leave()
	s := g.router.route([]byte(host))
	if s.cache != c || s.Docroot != nil {
		return true
	}
	fl, lead := p.flights.join(key)
	if !lead {
		return true
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(fasthttp.MethodGet)
	req.Header.SetHost(host)
	req.SetRequestURI(rest[len(host):])
	pinURI(req)
	setForwarding(&req.Header, &forwarding{client: warmClient, tls: scheme == "https"}, []byte(host))
	f := newFill(p, g, s, req, key, h, e, nil, false)
	p.metrics.refreshes.Inc()
	p.metrics.gapRefreshes.Inc()
	res := f.run()
	if res.err != nil || res.staleOnError {
		endStaleWhileRevalidate(c, h, key, e)
	}
	p.flights.finish(key, fl, &res)
	if res.resp != nil {
		releaseResponse(res.resp)
	}
	return res.err == nil && !res.staleOnError
}

// warmClient is who the origin is told asks for a warmed page: ramjet.
var warmClient = netip.AddrFrom4([4]byte{127, 0, 0, 1})
