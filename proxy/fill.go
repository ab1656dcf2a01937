package proxy

import (
	"fmt"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// result is what a fill produced: an entry to serve (stored, revalidated,
// or stale because the origin failed), a response to relay, or an error.
type result struct {
	entry  *cache.Entry
	resp   *fasthttp.Response // owned; relayed when entry is nil
	prefix []byte             // body bytes already read from resp
	status []byte             // Cache-Status
	stored bool
	// hit: entry came from the cache without a fill of this request's.
	hit bool
	// written: the answer is already in the client's response (a PURGE's,
	// a redirect).
	written bool
	// setCookies go to this client only: a response stored under
	// cache_set_cookie is stored without them.
	setCookies [][]byte
	// staleOnError: entry is the stale copy, served because the origin failed.
	staleOnError bool
	err          error
	// origin is how long this request's exchange with the upstream took
	// until its response header (ns, for the access log); 0: none.
	origin int64
}

// reset empties res for the request's next use, field by field as the
// parts' resets do (resetParts); TestResultResetIsAFreshResult.
func (res *result) reset() {
	res.entry, res.resp, res.prefix, res.status = nil, nil, nil, nil
	res.stored, res.hit, res.written, res.staleOnError = false, false, false, false
	res.setCookies, res.err, res.origin = nil, nil, 0
}

// stageFill answers what the cache could not: a pass is forwarded, a miss
// fetched. Concurrent misses of one key share one fetch unless the key is
// remembered as uncacheable (hit-for-miss); the request that leads the
// fetch first looks again, since a fill may have stored the entry between
// this request's lookup and its joining.
func stageFill(r *request) verdict {
	if r.pass != nil {
		return r.forward()
	}
	key := string(r.key)
	if !r.handoff.coalesce {
		r.res = r.fetch(key)
		return answered
	}
	fl, lead := r.p.flights.join(key)
	if !lead {
		if !r.follow(fl) {
			r.res = r.fetch(key)
		}
		return answered
	}
	if e := r.freshShared(); e != nil {
		r.p.flights.finish(key, fl, &result{stored: true})
		r.tally(r.c.collapsed, outHit)
		return r.answer(e, csCollapsed)
	}
	r.res = r.fetch(key)
	r.p.flights.finish(key, fl, &r.res)
	return answered
}

// follow waits for the leading fill and takes what it stored (or the
// stale copy it served). It reports false when the leader's answer could
// not be shared: the request then fetches its own.
func (r *request) follow(fl *flight) bool {
	select {
	case <-fl.done:
	case <-r.cancelled():
		r.res = result{err: r.frag.ctx.Err()}
		return true
	}
	if fl.stale != nil {
		r.tally(r.c.staleError, outHit)
		r.res = result{entry: fl.stale, status: csStaleOnError, staleOnError: true}
		return true
	}
	if !fl.stored {
		return false
	}
	e := r.freshShared()
	if e == nil {
		return false
	}
	r.tally(r.c.collapsed, outHit)
	r.answer(e, csCollapsed)
	return true
}

// cancelled is closed when a fragment's page stops waiting for it; a
// client request's is nil (never): nobody gave it a context.
func (r *request) cancelled() <-chan struct{} {
	if r.frag.ctx == nil {
		return nil
	}
	return r.frag.ctx.Done()
}

// fetch runs one fill for the request against its site's upstream.
func (r *request) fetch(key string) result {
	req := r.upstreamRequest()
	defer fasthttp.ReleaseRequest(req)
	f := newFill(r.p, r.g, r.s, req, key, r.h, r.handoff.stale, r, false)
	res := f.run()
	res.origin = max(f.now-f.born, 1)
	switch {
	case res.staleOnError:
		r.tally(r.c.staleError, outHit)
	case res.err == nil && r.handoff.passUntil == 0: // hit-for-pass: lookup counted a pass
		r.tally(r.c.miss, outMiss)
	}
	return res
}

// fill is one exchange with a site's upstream that may store its answer:
// a page's or a fragment's miss, the revalidation of a stale copy, a
// background refresh. It touches the client only to pass on the origin's
// interim responses (client).
type fill struct {
	p     *Proxy
	g     *generation
	s     *site
	req   *fasthttp.Request // to the upstream; the caller's
	key   string
	h     uint64
	stale *cache.Entry // revalidated with its validators; served if the upstream fails
	fwd   string       // Cache-Status fwd reason
	id    uint64       // the client's private identity; 0: none (or a background refresh)
	// fragment: an ESI fragment, stored without compressed copies (its
	// body is only ever assembled into pages).
	fragment bool
	// private: the include asked for a private copy; never shared.
	private bool
	// scope is the answering site's purge namespace (scope.go): its
	// entries' tags live there, its response purges act there.
	scope string
	// client gets the origin's interim responses (interim.go): the
	// client whose request this fill is; nil for fragments and refreshes.
	client *fasthttp.RequestCtx
	// requester is the one request the fill is for (nil: a coalesced
	// fill others may wait on, a fragment, a background refresh): a
	// docroot site does not run PHP for it once it went away.
	requester phppool.Client
	// htKey is the requester's docrootKey (0: none).
	htKey uint64
	// passUntil: the hit-for-pass marker the request came through lasts
	// until then (0: none).
	passUntil int64

	resp      *fasthttp.Response // set by run
	born, now int64
	d         policy.Decision
	// bodies, when set, is the stored copy whose bodies a revalidated
	// entry keeps instead of being compressed again.
	bodies *cache.Entry
	// asCame: the body is stored in a coding ramjet cannot undo, as it
	// came (not an ESI page), so it is not compressed again.
	asCame bool
	// inspect, when set, runs the site's WAF on the upstream's answer
	// before anything is stored; false: the answer is stopped.
	inspect func(*fasthttp.Response) bool
	// ls is what the site's LiteSpeed cache rules said of the request
	// that fills; nil when they said nothing.
	ls *lsRules
}

// newFill is the one place a fill is made: of key (hash h) on s,
// sending req to its upstream, revalidating stale when set. by is the
// request the fill answers: a page's or a fragment's miss, or
// (background) the refresh of the stale copy by was served, which takes
// from it only how to store (a fragment's way, the site rules' TTL): its
// client has its answer, and the refresh outlives by. by nil: a gap's
// warm-up of a stored page, which no request asked for.
func newFill(p *Proxy, g *generation, s *site, req *fasthttp.Request, key string, h uint64, stale *cache.Entry, by *request, background bool) fill {
	f := fill{p: p, g: g, s: s, req: req, key: key, h: h, stale: stale, fwd: fwdMiss,
		scope: scopeOf(s, req.Header.Host())} // req's Host is the one its request was settled on
	if stale != nil {
		f.fwd = fwdStale
	}
	if by == nil {
		return f
	}
	f.fragment, f.ls = by.kind == kindFragment, by.lsRules()
	if background {
		return f
	}
	f.fwd, f.id, f.client, f.passUntil = by.handoff.fwd, by.identity(), by.ctx, by.handoff.passUntil
	f.private = by.frag.private
	if by.wafTx != nil { // kept only when the site inspects responses
		f.inspect = by.inspectResponse
	}
	if by.kind == kindPage && !by.handoff.coalesce { // nobody else waits on its fill
		f.requester = by
	}
	if stale == nil { // a revalidation adds validators the key does not know
		f.htKey = by.docrootKey(true) // the leader's: req is made of its request
	}
	return f
}

// run sends the request, applies the purges the answer carries, decides,
// stores, and says what to answer.
func (f *fill) run() result {
	if f.stale != nil {
		addValidators(f.req, f.stale)
	}
	f.resp = fasthttp.AcquireResponse()
	f.born = f.s.cache.Now() // a purge from now on must invalidate what this fill stores
	err := doUpstream(f.s, f.requester, f.htKey, f.req, f.resp)
	f.now = f.s.cache.Now()
	if err != nil {
		fasthttp.ReleaseResponse(f.resp)
		switch {
		case f.stale != nil && f.stale.ServableOnError(f.now):
			f.p.log.Warn("serving stale: origin failed", "key", f.key, "err", err)
			return result{entry: f.stale, status: csStaleOnError, staleOnError: true}
		case f.stale != nil && f.stale.MustRevalidate:
			return result{err: fmt.Errorf("%w: %w", ErrMustRevalidate, err)}
		}
		return result{err: err}
	}
	if f.inspect != nil && !f.inspect(f.resp) {
		releaseResponse(f.resp)
		return result{err: ErrBlocked} // neither stored nor sent
	}
	passInterim(f.client, f.resp)
	f.p.applyResponsePurges(&f.resp.Header, responsePurge{host: f.req.Header.Host(), scope: f.scope, born: f.born - 1, id: f.id})
	code := f.resp.StatusCode()
	switch {
	case f.stale != nil && code >= 500 && f.stale.ServableOnError(f.now):
		releaseResponse(f.resp)
		f.p.log.Warn("serving stale: origin error status", "key", f.key, "status", code)
		return result{entry: f.stale, status: csStaleOnError, staleOnError: true}
	case f.stale != nil && code == fasthttp.StatusNotModified:
		return f.storeRevalidated()
	}
	in := policyInput(f.req, f.resp, f.s, f.now) // by value: no garbage per fill
	if f.ls != nil && len(in.LSCacheControl) == 0 && !f.ls.overruled(in.CacheControl) {
		in.LSCacheControl = f.ls.control // the rules' TTL, when the application says nothing
	}
	f.d = policy.Decide(&in)
	applyOriginExpires(f.s, f.req, f.resp)
	if f.private {
		f.d.Private, f.d.Store = f.d.Private || f.d.Store, false
	}
	if f.d.Store && f.d.Implicit && f.sessionAnswer() {
		f.d.Store, f.d.Reason = false, policy.ReasonCookie
	}
	switch {
	case f.d.Private && f.d.TTL > 0 && f.id != 0 && f.p.private != nil:
		return f.storePrivate()
	case f.d.Store:
		return f.store()
	}
	f.rememberUncacheable(code)
	f.p.metrics.notStored.Inc()
	return result{resp: f.resp, status: missStatus(f.fwd, f.d.Reason)}
}

func addValidators(req *fasthttp.Request, stale *cache.Entry) {
	if len(stale.ETag) > 0 {
		req.Header.SetBytesV("If-None-Match", stale.ETag)
	}
	if len(stale.LastModified) > 0 {
		req.Header.SetBytesV("If-Modified-Since", stale.LastModified)
	}
}

func missStatus(fwd, reason string) []byte {
	b := []byte("ramjet; fwd=" + fwd)
	if reason != "" {
		b = append(b, "; detail="...)
		b = append(b, reason...)
	}
	return b
}

func storedStatus(fwd string) []byte {
	if fwd == fwdMiss {
		return csStored
	}
	return []byte("ramjet; fwd=" + fwd + "; stored")
}

// Forward reasons (RFC 9211 fwd parameter).
const (
	fwdMiss     = "miss"
	fwdVaryMiss = "vary-miss"
	fwdStale    = "stale"
	fwdURIMiss  = "uri-miss"
)

func releaseResponse(resp *fasthttp.Response) {
	_ = resp.CloseBodyStream() // the body is unwanted; a close error only drops the connection
	fasthttp.ReleaseResponse(resp)
}
