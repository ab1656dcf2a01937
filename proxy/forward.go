package proxy

import (
	"github.com/valyala/fasthttp"
)

// forward relays a request the cache must not answer (another method, a
// bypass), streaming both bodies. An unsafe method that succeeded
// invalidates the URL it targeted (RFC 9111 4.4), before the client has
// the answer, so that its next GET cannot see the old page.
func (r *request) forward() verdict {
	ctx := r.ctx
	req := r.newUpstreamRequest(false, r.g.cfg.MaxRequestBody)
	resp := fasthttp.AcquireResponse()
	if ctx.IsHead() {
		resp.SkipBody = true
	}
	sent := r.p.cache.Now()
	err := doUpstream(r.s, r, r.docrootKey(false), req, resp)
	took := max(r.p.cache.Now()-sent, 1)
	fasthttp.ReleaseRequest(req)
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		r.res.err, r.res.origin = err, took
		return answered
	}
	if r.wafTx != nil && !r.inspectResponse(resp) { // kept only when the site inspects responses
		releaseResponse(resp)
		r.res.err, r.res.origin = ErrBlocked, took
		return answered
	}
	passInterim(ctx, resp)
	r.p.applyResponsePurges(&resp.Header, responsePurge{host: ctx.Host(), scope: scopeOf(r.s, ctx.Host()), id: r.identity()})
	r.invalidateAfter(resp.StatusCode())
	r.res = result{resp: resp, status: r.pass, origin: took}
	return answered
}

// invalidateAfter drops the cached copies of the request's URL after an
// unsafe method answered with code.
func (r *request) invalidateAfter(code int) {
	h := r.header()
	if h.IsGet() || h.IsHead() || h.IsOptions() || h.IsTrace() || code < 200 || code >= 400 {
		return
	}
	r.s.cache.Remove(r.h, r.key)
}
