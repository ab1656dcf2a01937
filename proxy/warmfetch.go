package proxy

import (
	"strings"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/docroot"
)

// A warm fetch is a request of ramjet's own making: the GET a visitor of
// the candidate's URL would send, with its Host and the request fields
// its variant was selected by, and nothing else (no cookie, no
// credentials; its client is ramjet, warmClient). It takes the stages a
// visitor's request takes up to the cache key — admit routes it, the
// site's .htaccess rules (rewrite) refuse, redirect or vary it as they
// would the visitor's, identity passes what the rules or the site keep
// out of the cache — so that the rules and PHP see exactly what they
// would for a visitor. Then warmFill takes the place of lookup and
// fill: a copy fresh again, a key or variant other than the candidate's,
// or a fill of the key under way leaves it alone; otherwise it fills, as
// a visitor's miss would (through the docroot's PHP for a docroot site),
// revalidating a stale copy. What the rules refuse or redirect, or pass
// uncached, is never fetched. The WAF (guard) is left out: it judges
// clients, and a warm fetch has none.
//
// A warm fetch is a kind of request (kindWarm): its stage list
// (pipeline.go) stops after key.

// stageRewriteWarm applies the site's rules to a warm fetch (its header
// is its own, and has no raw lines); a request they refuse or redirect
// ends unfetched.
func stageRewriteWarm(r *request) verdict {
	if r.rewrite(true, false) {
		r.res.err = errRefused
		return answered
	}
	return proceed
}

// warmOutcome is what a warm fetch came to.
type warmOutcome uint8

const (
	warmRefetched   warmOutcome = iota
	warmRevalidated             // a stale copy revalidated or replaced
	warmSkippedOne              // fresh again, being filled, or not the candidate's key or variant
	warmRefused                 // the site's rules refused, redirected or passed it: never fetched
	warmFailed                  // the upstream failed (a stale copy kept)
	warmNotStored               // answered, not stored
)

// runWarm runs the warm fetch of c, as a visitor's request of it would
// run (kindWarm's stages, then warmFill), and reports what it came to.
func (p *Proxy) runWarm(c warmCandidate) warmOutcome {
	host, ok := keyHost(c.key)
	if !ok {
		return warmSkippedOne
	}
	r := requestPool.Get().(*request)
	req := madeUpRequest(c, host)
	defer fasthttp.ReleaseRequest(req)
	r.p, r.g, r.req, r.c, r.kind = p, p.enter(), req, &madeUpCounters, kindWarm // release leaves g
	r.tls = strings.HasPrefix(c.key, "https://")
	r.setClient(warmClient, 0)
	r.claimed = -1
	defer r.release()
	p.run(r)
	if r.res.err != nil {
		return warmRefused // the rules refused or redirected it
	}
	return r.warmFill(c)
}

// madeUpRequest is the GET a visitor of c's URL sends: the host, the
// key's target, and the request fields c's variant was selected by
// (plainRequest: never a cookie or credentials).
func madeUpRequest(c warmCandidate, host string) *fasthttp.Request {
	_, rest, _ := strings.Cut(c.key, "://")
	req := fasthttp.AcquireRequest()
	req.Header.SetMethod(fasthttp.MethodGet)
	req.Header.SetHost(host)
	req.SetRequestURI(rest[len(host):])
	pinURI(req)
	values := strings.Split(c.variant, "\x00")
	for i, name := range c.vary.Headers {
		if i < len(values) && values[i] != "" && name != varyValueKey { // the rules set that one
			req.Header.Set(name, values[i])
		}
	}
	return req
}

// madeUpCounters take what the stages count of a warm fetch: it is no
// visitor's request, so it is kept out of theirs (and out of the site's:
// tally counts only a client's).
var madeUpCounters = requestCounters{hit: new(metrics.Counter), hitPrivate: new(metrics.Counter),
	stale: new(metrics.Counter), staleError: new(metrics.Counter), miss: new(metrics.Counter),
	collapsed: new(metrics.Counter), bypass: new(metrics.Counter), pass: new(metrics.Counter),
	method: new(metrics.Counter)}

// warmFill ends a warm fetch in place of lookup and fill: the request
// the stages made must be the candidate's (same key, same variant), its
// copy not fresh again, and no other fill of it under way; then it fills.
func (r *request) warmFill(c warmCandidate) warmOutcome {
	if r.pass != nil {
		return warmRefused // bypassed by the site or its rules: never stored
	}
	r.variant = appendVariant(r.variant[:0], r.header(), &c.vary)
	if string(r.key) != c.key || string(r.variant) != c.variant {
		return warmSkippedOne // the rules made it another page than the candidate's
	}
	ch := r.s.cache
	stale, fresh := warmCopy(ch, r.h, c)
	if fresh != nil {
		return warmSkippedOne
	}
	fl, lead := r.p.flights.join(c.key)
	if !lead { // a visitor's fill runs
		if c.gap {
			// It may fail (the origin down): the gap's warm-up looks
			// again at its next round, until the copy is fresh.
			return warmFailed
		}
		return warmSkippedOne
	}
	req := r.upstreamRequest()
	defer fasthttp.ReleaseRequest(req)
	f := newFill(r.p, r.g, r.s, req, c.key, r.h, stale, r, true)
	r.countWarm(c)
	switch failed, stored := f.runBackground(fl); {
	case failed:
		return warmFailed
	case !stored:
		return warmNotStored
	}
	if _, e := warmCopy(ch, r.h, c); e != nil && c.pop != nil {
		e.Popularity().Adopt(c.pop, ch.Now())
	}
	if stale != nil {
		return warmRevalidated
	}
	return warmRefetched
}

// countWarm counts the fill of c: a warm-up's fetch, or a gap's refresh.
func (r *request) countWarm(c warmCandidate) {
	m := r.p.metrics
	if c.gap {
		m.refreshes.Inc()
		m.gapRefreshes.Inc()
		return
	}
	m.warm.fetches.Inc()
	r.s.state.warm.counters.fetches.Inc()
}

// madeUpUpstreamRequest is what a fill of the warm fetch r sends
// (upstreamRequest sets the key's target): its request as the stages
// left it (the rules' vary value included), told that ramjet asks; a
// docroot learns no port or local address (there is no connection).
func (r *request) madeUpUpstreamRequest() *fasthttp.Request {
	req := fasthttp.AcquireRequest()
	r.req.Header.CopyTo(&req.Header)
	f := forwarding{client: r.client, claimed: -1, tls: r.tls}
	setForwarding(&req.Header, &f, r.header().Host())
	if r.s.Docroot != nil {
		req.Header.SetBytesV(docroot.HeaderRemotePort, nil)
		req.Header.SetBytesV(docroot.HeaderServerAddr, nil)
	}
	return req
}
