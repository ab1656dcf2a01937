package proxy

import "errors"

// stageRespond writes a client's answer into its response (with the
// site's HSTS and Alt-Svc over TLS). It runs for every answered request.
func stageRespond(r *request) verdict {
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

// stageHandOver hands a fragment's answer to the page assembling it (the
// fragments' respond).
func stageHandOver(r *request) verdict {
	r.frag.take(r)
	return proceed
}
