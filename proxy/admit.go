package proxy

import (
	"github.com/valyala/fasthttp"
)

// stageAdmit settles the request's authority (admit) and routes it to
// its site, and answers what it cannot route (400) and what the site
// does not take: a declared body over the limit (413), a plain request
// for a site that wants HTTPS (redirect).
func stageAdmit(r *request) verdict {
	switch r.admit() {
	case admitted:
		return proceed
	case admitHTTPS:
		redirectToHTTPS(r.ctx, r.g)
		r.res.written = true
	}
	return answered
}

// stageAdmitInline admits an inline request as stageAdmit does; what
// that would not let through, and any other method than GET and HEAD
// (a PURGE too), is declined.
func stageAdmitInline(r *request) verdict {
	if h := r.header(); r.admit() != admitted || !h.IsGet() && !h.IsHead() {
		return declined
	}
	return proceed
}

// stageRoute routes a fragment, a GET of the proxy's own making: there
// is nothing else to admit.
func stageRoute(r *request) verdict {
	r.s = r.g.router.route(r.header().Host())
	return proceed
}

// admission is what admit made of a client's request.
type admission uint8

const (
	admitted     admission = iota
	admitRefused           // r.res.err says why (400, 413)
	admitHTTPS             // the site wants HTTPS: redirect
)

// admit settles the request's target (settleTarget) and Connection list,
// routes it, and notes when it began for the site's access log.
func (r *request) admit() admission {
	bad := settleTarget(r.req, r.tls)
	settleConnection(r.header())
	if bad == nil {
		r.s = r.g.router.routeNormal(r.header().Host())
	} else {
		r.s = r.g.router.def
	}
	r.began(r.s)
	switch {
	case bad != nil:
		r.res.err = bad
	case tooLarge(r.ctx, r.g.cfg.MaxRequestBody):
		r.res.err = fasthttp.ErrBodyTooLarge
	case isPurgeMethod(r.header().Method()):
		return admitted // PURGE and REFRESH are never redirected
	case needsHTTPS(r.ctx, r.s):
		return admitHTTPS
	default:
		return admitted
	}
	return admitRefused
}

// tooLarge reports a declared body length over the limit; a chunked body
// is cut by limitedBody as it streams.
func tooLarge(ctx *fasthttp.RequestCtx, limit int64) bool {
	return limit > 0 && int64(ctx.Request.Header.ContentLength()) > limit
}
