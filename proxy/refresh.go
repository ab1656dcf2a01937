package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// refresh revalidates a stale entry in the background, once per key: the
// client already has the stale copy. The goroutine belongs to the Proxy
// and Close waits for it.
func (r *request) refresh(stale *cache.Entry) {
	p := r.p
	gapped := r.s.cache.Gapped(stale)
	if gapped && !p.takeGapRefresh() {
		return // a later visitor of the page starts it
	}
	key := string(r.key)
	fl, lead := p.flights.join(key)
	if !lead || !p.startBackground() {
		if lead {
			p.flights.finish(key, fl, &result{})
		}
		if gapped {
			<-p.gapRefreshes
		}
		return
	}
	req := r.upstreamRequest()
	f := newFill(p, r.g, r.s, req, key, r.h, stale, r, true)
	go func() {
		defer p.bg.Done()
		defer fasthttp.ReleaseRequest(req)
		p.metrics.refreshes.Inc()
		if gapped {
			p.metrics.gapRefreshes.Inc()
			defer func() { <-p.gapRefreshes }()
		}
		f.runBackground(fl)
	}()
}

// runBackground runs f, a fill no client waits on directly, as the lead
// of its key's flight fl: a failed revalidation ends the stale copy's
// while-revalidate window, the followers get the result, and the
// response is released. It reports whether the upstream failed and
// whether the answer was stored.
func (f *fill) runBackground(fl *flight) (failed, stored bool) {
	res := f.run()
	failed = res.err != nil || res.staleOnError
	if failed && f.stale != nil {
		endStaleWhileRevalidate(f.s.cache, f.h, f.key, f.stale)
	}
	f.p.flights.finish(f.key, fl, &res)
	if res.resp != nil {
		releaseResponse(res.resp)
	}
	return failed, res.stored
}

// maxGapRefreshes bounds the refreshes in flight of entries a fan-out gap
// left stale: a gap makes every page of every site stale at once, and
// their refreshes must not become the stampede the gap avoids. Past it, a
// visitor gets the stale copy without starting a refresh; a later one
// does (the gap's grace bounds the wait).
const maxGapRefreshes = 16

// takeGapRefresh takes a token for a gap's refresh, if one is free.
func (p *Proxy) takeGapRefresh() bool {
	select {
	case p.gapRefreshes <- struct{}{}:
		return true
	default:
		return false
	}
}

// endStaleWhileRevalidate stops serving e as "stale while revalidating"
// once a revalidation failed: the next request tries the origin itself and
// falls back to the stale copy only within its stale-if-error window, so
// clients are told the origin is failing.
func endStaleWhileRevalidate(c *cache.Cache, h uint64, key string, e *cache.Entry) {
	o := c.Lookup(h, []byte(key))
	if o == nil || o.Variant([]byte(e.Variant)) != e {
		return // replaced meanwhile
	}
	n := *e
	n.StaleUntil = c.Now()
	c.Insert(h, key, o.Vary, &n)
}
