package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// refresh revalidates a stale entry in the background, once per key: the
// client already has the stale copy. The goroutine belongs to the Proxy
// and Close waits for it.
func (p *Proxy) refresh(ctx *fasthttp.RequestCtx, g *generation, s *site, st *reqState, h uint64, stale *cache.Entry) {
	key := string(st.key)
	fl, lead := p.flights.join(key)
	if !lead {
		return
	}
	if !p.startBackground() {
		p.flights.finish(key, fl, false)
		return
	}
	req := newUpstreamRequest(ctx, true)
	go func() {
		defer p.bg.Done()
		defer fasthttp.ReleaseRequest(req)
		p.metrics.refreshes.Inc()
		res := p.exchange(g, s, req, key, h, stale, fwdStale)
		p.flights.finish(key, fl, res.stored)
		if res.resp != nil {
			releaseResponse(res.resp)
		}
		if res.err != nil {
			p.log.Warn("background refresh failed", "key", key, "err", res.err)
		}
	}()
}

// startBackground registers a background goroutine unless the proxy is
// closing; Close waits for every registered one.
func (p *Proxy) startBackground() bool {
	p.bgMu.Lock()
	defer p.bgMu.Unlock()
	if p.bgClosed {
		return false
	}
	p.bg.Add(1)
	return true
}
