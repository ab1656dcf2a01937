package proxy

import (
	"github.com/valyala/fasthttp"
)

// ServeFastHTTP answers a client's request through the pipeline: from the
// cache when it can, else from the site's upstream.
func (p *Proxy) ServeFastHTTP(ctx *fasthttp.RequestCtx) {
	r := p.clientRequest(ctx, kindPage)
	defer r.release()
	p.run(r)
}

// ServeHit answers ctx only when it can without blocking or changing
// state — a fresh cache hit, the user's private copy included — and then
// exactly as ServeFastHTTP does, through the same stages (the inline
// kind's list, which ends at lookup): it is h2.Config.Inline, run on an
// HTTP/2 connection's own goroutine, and the main listener's Inline,
// run on an HTTP/1.1 connection's between fasthttp's services (package
// h1). For anything else (a miss, a stale
// or purged entry, an ESI page, a request the cache must not answer) a
// stage declines, or lookup does not answer, and ServeHit returns false
// having changed nothing; the request then goes to ServeFastHTTP.
func (p *Proxy) ServeHit(ctx *fasthttp.RequestCtx) bool {
	r := p.clientRequest(ctx, kindInline)
	defer r.release()
	return p.run(r)
}

var (
	_ fasthttp.RequestHandler         = (*Proxy)(nil).ServeFastHTTP
	_ func(*fasthttp.RequestCtx) bool = (*Proxy)(nil).ServeHit
)
