package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// ServeFastHTTP is the request path: route, pass what the cache must not
// answer, look up, then serve a hit or fill a miss.
func (p *Proxy) ServeFastHTTP(ctx *fasthttp.RequestCtx) {
	g := p.gen.Load()
	s := g.router.route(ctx.Host())
	defer addHSTS(ctx, s)
	if tooLarge(ctx, g.cfg.MaxRequestBody) {
		p.writeError(ctx, fasthttp.ErrBodyTooLarge)
		return
	}
	if m := string(ctx.Method()); m == "PURGE" || m == "REFRESH" {
		p.purgeMethod(ctx, g)
		return
	}
	if redirectToHTTPS(ctx, g, s) {
		return
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		p.unsafeMethod(ctx, g, s)
		return
	}
	if p.bypassed(ctx, s) {
		p.metrics.bypass.Inc()
		p.forward(ctx, g, s, csBypass)
		return
	}
	st := acquireState()
	defer releaseState(st)
	st.key = appendKey(st.key[:0], st, requestScheme(ctx), ctx.Host(), pathOf(ctx), ctx.URI().QueryString(), s.drop)
	now := cache.Now()
	if p.servePrivate(ctx, s, st, now) {
		return
	}
	h := p.cache.Hash(st.key)
	o := p.cache.Lookup(h, st.key)
	switch {
	case o == nil:
		p.fill(ctx, g, s, st, h, nil, fwdMiss, true)
	case o.PassUntil > now:
		p.metrics.pass.Inc()
		p.fill(ctx, g, s, st, h, nil, fwdURIMiss, false)
	default:
		p.lookupVariant(ctx, g, s, st, h, o, now)
	}
}

// lookupVariant serves the variant of o that the request selects: fresh,
// stale while one refresh runs, or refetched.
func (p *Proxy) lookupVariant(ctx *fasthttp.RequestCtx, g *generation, s *site, st *reqState, h uint64, o *cache.Object, now int64) {
	st.variant = appendVariant(st.variant[:0], &ctx.Request.Header, o.Vary)
	e := o.Variant(st.variant)
	if e == nil {
		p.fill(ctx, g, s, st, h, nil, fwdVaryMiss, true)
		return
	}
	switch p.cache.Status(e, now) {
	case cache.Fresh:
		p.metrics.hit.Inc()
		p.serve(ctx, s, e, now, csHit)
	case cache.Stale:
		p.metrics.stale.Inc()
		p.serve(ctx, s, e, now, csStale)
		p.refresh(ctx, g, s, st, h, e)
	case cache.ErrorOnly:
		p.fill(ctx, g, s, st, h, e, fwdStale, true)
	case cache.Purged:
		p.fill(ctx, g, s, st, h, nil, fwdMiss, true)
	default:
		p.fill(ctx, g, s, st, h, nil, fwdStale, true)
	}
}

// servePrivate serves the client's own fresh copy of the page from the
// private cache, if it has one.
func (p *Proxy) servePrivate(ctx *fasthttp.RequestCtx, s *site, st *reqState, now int64) bool {
	if p.private == nil || p.private.Len() == 0 {
		return false
	}
	if st.id = p.identity(ctx); st.id == 0 {
		return false
	}
	st.pkey = appendPrivateKey(st.pkey[:0], st.id, st.key)
	o := p.private.Lookup(p.private.Hash(st.pkey), st.pkey)
	if o == nil {
		return false
	}
	st.variant = appendVariant(st.variant[:0], &ctx.Request.Header, o.Vary)
	e := o.Variant(st.variant)
	if e == nil || p.private.Status(e, now) != cache.Fresh {
		return false
	}
	p.metrics.hitPrivate.Inc()
	p.serve(ctx, s, e, now, csHitPrivate)
	return true
}

// bypassed reports whether the request must skip the cache both ways:
// caching off for the site, credentials, or a bypass cookie.
func (p *Proxy) bypassed(ctx *fasthttp.RequestCtx, s *site) bool {
	h := &ctx.Request.Header
	return !s.Cache || len(h.Peek("Authorization")) > 0 || hasCookie(h, s.bypass)
}

// unsafeMethod forwards a request the cache cannot answer and, when it
// succeeded, invalidates the URL it targeted (RFC 9111 4.4).
func (p *Proxy) unsafeMethod(ctx *fasthttp.RequestCtx, g *generation, s *site) {
	p.metrics.method.Inc()
	p.forward(ctx, g, s, csMethod)
	if code := ctx.Response.StatusCode(); code < 200 || code >= 400 {
		return
	}
	if string(ctx.Method()) == fasthttp.MethodOptions || string(ctx.Method()) == fasthttp.MethodTrace {
		return
	}
	st := acquireState()
	defer releaseState(st)
	st.key = appendKey(st.key[:0], st, requestScheme(ctx), ctx.Host(), pathOf(ctx), ctx.URI().QueryString(), s.drop)
	p.cache.Remove(p.cache.Hash(st.key), st.key)
}

// tooLarge reports a declared body length over the limit; a chunked body
// is cut by limitedBody as it streams.
func tooLarge(ctx *fasthttp.RequestCtx, limit int64) bool {
	return limit > 0 && int64(ctx.Request.Header.ContentLength()) > limit
}

// pathOf is the request path as the client sent it (not decoded).
func pathOf(ctx *fasthttp.RequestCtx) []byte {
	uri := ctx.Request.Header.RequestURI()
	if i := indexAny(uri, '?', '#'); i >= 0 {
		uri = uri[:i]
	}
	if len(uri) > 0 && uri[0] != '/' { // absolute form: http://host/path
		return ctx.URI().PathOriginal()
	}
	return uri
}

func indexAny(b []byte, c1, c2 byte) int {
	for i, c := range b {
		if c == c1 || c == c2 {
			return i
		}
	}
	return -1
}

var _ fasthttp.RequestHandler = (*Proxy)(nil).ServeFastHTTP
