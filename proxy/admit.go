package proxy

import (
	"time"

	"github.com/valyala/fasthttp"
)

// stageAdmit settles the request's authority (settleTarget) and routes
// it to its site, notes when it began, and refuses what it cannot route
// (400) and what the site does not take: a declared body over the limit (413), a plain request for
// a site that wants HTTPS (redirect). A fragment is a GET of the proxy's
// own making: it is only routed.
func stageAdmit(r *request) verdict {
	if r.ctx == nil {
		r.s = r.g.router.route(r.header().Host())
		return proceed
	}
	bad := settleTarget(r.req, r.tls)
	settleConnection(r.header())
	if bad == nil {
		r.s = r.g.router.routeNormal(r.header().Host())
	} else {
		r.s = r.g.router.def
	}
	if r.s.log != nil {
		r.start = time.Now() // the access log's request time: read the clock only for it
	}
	h := r.header()
	switch {
	case bad != nil:
		r.res.err = bad
	case tooLarge(r.ctx, r.g.cfg.MaxRequestBody):
		r.res.err = fasthttp.ErrBodyTooLarge
	case isPurgeMethod(h.Method()):
		return proceed // PURGE and REFRESH are never redirected
	case needsHTTPS(r.ctx, r.s):
		if !r.inline {
			redirectToHTTPS(r.ctx, r.g)
			r.res.written = true
		}
	case r.inline && !h.IsGet() && !h.IsHead():
		return declined
	default:
		return proceed
	}
	if r.inline {
		return declined
	}
	return answered
}

// tooLarge reports a declared body length over the limit; a chunked body
// is cut by limitedBody as it streams.
func tooLarge(ctx *fasthttp.RequestCtx, limit int64) bool {
	return limit > 0 && int64(ctx.Request.Header.ContentLength()) > limit
}
