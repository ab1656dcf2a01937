package proxy

import "errors"

// stageRespond writes the request's answer: a client's into its response
// (with the site's HSTS and Alt-Svc over TLS), a fragment's to the page assembling it.
// It runs for every answered request.
func stageRespond(r *request) verdict {
	if r.frag != nil {
		r.frag.take(r)
		return proceed
	}
	res := &r.res
	switch {
	case res.written:
	case errors.Is(res.err, ErrBlocked):
		r.answerBlocked() // the WAF stopped the upstream's answer
	case res.err != nil:
		r.p.writeError(r.ctx, res.err)
	case res.entry != nil:
		now := r.now
		if !res.hit {
			now = r.s.cache.Now()
		}
		r.serve(res.entry, now, res.status)
		addCookies(&r.ctx.Response.Header, res.setCookies)
	case res.resp != nil:
		r.relay(res.resp, res.prefix, res.status)
	}
	addHSTS(r.ctx, r.s)
	addAltSvc(r.ctx, r.s)
	announceBody(r.ctx)
	return proceed
}
