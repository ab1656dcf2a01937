package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// ServeHit answers ctx only when ServeFastHTTP would answer it with a
// fresh public cache hit, and then exactly as ServeFastHTTP does (the
// same serveEntry: stored headers, Age, Cache-Status, conditional
// requests, encodings, HSTS), without blocking: it is h2.Config.Inline,
// run on an HTTP/2 connection's own goroutine. For anything else — a
// miss, stale or purged entry, ESI page, a request the cache must not
// answer or whose client may have a private copy — it returns false
// having changed nothing, and the request goes to ServeFastHTTP.
func (p *Proxy) ServeHit(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsGet() && !ctx.IsHead() {
		return false
	}
	g := p.gen.Load()
	s := g.router.route(ctx.Host())
	if tooLarge(ctx, g.cfg.MaxRequestBody) || s.HTTPSRedirect && !ctx.IsTLS() || p.bypassed(ctx, s) {
		return false
	}
	if p.private != nil && p.private.Len() > 0 && p.identity(ctx) != 0 {
		return false // servePrivate looks for the user's own copy first
	}
	st := acquireState()
	defer releaseState(st)
	st.key = appendKey(st.key[:0], st, requestScheme(ctx), ctx.Host(), pathOf(ctx), ctx.URI().QueryString(), s.drop)
	now := cache.Now()
	h := p.cache.Hash(st.key)
	o := p.cache.Lookup(h, st.key)
	if o == nil || o.PassUntil > now {
		return false
	}
	st.variant = appendVariant(st.variant[:0], &ctx.Request.Header, o.Vary)
	e := o.Variant(st.variant)
	if e == nil || e.Doc != nil || p.cache.Status(e, now) != cache.Fresh {
		return false // ESI pages are assembled from fragments that may need fetching
	}
	p.metrics.hit.Inc()
	serveEntry(ctx, s, e, now, csHit)
	addHSTS(ctx, s)
	return true
}
