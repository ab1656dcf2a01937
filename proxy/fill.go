package proxy

import (
	"fmt"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// result is what one origin exchange produced: an entry to serve (stored,
// revalidated, or stale because the origin failed), a response to stream,
// or an error.
type result struct {
	entry  *cache.Entry
	resp   *fasthttp.Response // owned; streamed when entry is nil
	prefix []byte             // body bytes already read from resp
	status []byte             // Cache-Status
	stored bool
	// setCookies go to this client only: a response stored under
	// cache_set_cookie is stored without them.
	setCookies [][]byte
	// staleOnError: entry is the stale copy, served because the origin failed.
	staleOnError bool
	err          error
}

// fill answers a request the cache cannot: concurrent fills of one key
// share one origin request unless coalesce is off (hit-for-miss).
func (p *Proxy) fill(ctx *fasthttp.RequestCtx, g *generation, s *site, st *reqState, h uint64, stale *cache.Entry, fwd string, coalesce bool) {
	key := string(st.key)
	if coalesce {
		fl, lead := p.flights.join(key)
		if lead {
			res := p.fetch(ctx, g, s, key, h, stale, fwd)
			p.flights.finish(key, fl, &res)
			p.respond(ctx, s, res)
			return
		}
		if p.follow(ctx, s, st, h, fl) {
			return
		}
	}
	p.respond(ctx, s, p.fetch(ctx, g, s, key, h, stale, fwd))
}

// follow waits for the leading fill and serves what it stored. It reports
// false when the leader's answer could not be shared.
func (p *Proxy) follow(ctx *fasthttp.RequestCtx, s *site, st *reqState, h uint64, fl *flight) bool {
	<-fl.done
	if fl.stale != nil {
		p.metrics.staleError.Inc()
		p.serve(ctx, s, fl.stale, cache.Now(), csStaleOnError)
		return true
	}
	if !fl.stored {
		return false
	}
	o := p.cache.Lookup(h, st.key)
	if o == nil {
		return false
	}
	st.variant = appendVariant(st.variant[:0], &ctx.Request.Header, o.Vary)
	e := o.Variant(st.variant)
	now := cache.Now()
	if e == nil || p.cache.Status(e, now) != cache.Fresh {
		return false
	}
	p.metrics.collapsed.Inc()
	p.serve(ctx, s, e, now, csCollapsed)
	return true
}

// fetch runs one fill against the origin for the client's request.
func (p *Proxy) fetch(ctx *fasthttp.RequestCtx, g *generation, s *site, key string, h uint64, stale *cache.Entry, fwd string) result {
	req := newUpstreamRequest(ctx, s, true, 0)
	defer fasthttp.ReleaseRequest(req)
	return p.exchange(g, s, req, key, h, stale, fwd, p.identity(ctx))
}

// exchange sends a fill request, decides, stores, and says what to answer.
// It does not touch the client, so background refreshes use it too.
func (p *Proxy) exchange(g *generation, s *site, req *fasthttp.Request, key string, h uint64, stale *cache.Entry, fwd string, id uint64) result {
	if stale != nil {
		addValidators(req, stale)
	}
	resp := fasthttp.AcquireResponse()
	born := cache.Now() // a purge from now on must invalidate what this fill stores
	err := doUpstream(s, req, resp)
	now := cache.Now()
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		if stale != nil && stale.ServableOnError(now) {
			p.log.Warn("serving stale: origin failed", "key", key, "err", err)
			return result{entry: stale, status: csStaleOnError, staleOnError: true}
		}
		return result{err: err}
	}
	p.applyResponsePurges(&resp.Header, req.Header.Host(), born-1, id)
	code := resp.StatusCode()
	switch {
	case stale != nil && code >= 500 && stale.ServableOnError(now):
		releaseResponse(resp)
		p.log.Warn("serving stale: origin error status", "key", key, "status", code)
		return result{entry: stale, status: csStaleOnError, staleOnError: true}
	case stale != nil && code == fasthttp.StatusNotModified:
		return p.storeRevalidated(g, s, req, resp, key, h, stale, born, now)
	}
	in := policyInput(req, resp, s, now, false) // by value: no garbage per fill
	d := policy.Decide(&in)
	if d.Private && d.TTL > 0 && id != 0 && p.private != nil {
		return p.storePrivateResult(g, s, req, resp, &d, key, id, born, now)
	}
	if !d.Store {
		p.rememberUncacheable(g, h, key, code, now)
		p.metrics.notStored.Inc()
		return result{resp: resp, status: missStatus(fwd, d.Reason)}
	}
	return p.store(g, s, req, resp, &d, key, h, fwd, born, now)
}

// store reads the body of a cacheable response and inserts it; a body
// over the size limit streams through instead.
func (p *Proxy) store(g *generation, s *site, req *fasthttp.Request, resp *fasthttp.Response, d *policy.Decision, key string, h uint64, fwd string, born, now int64) result {
	body, complete, err := readBody(resp, g.cfg.MaxObjectSize)
	if err != nil {
		releaseResponse(resp)
		return result{err: fmt.Errorf("proxy: fill %s: %w", key, err)}
	}
	if !complete {
		p.metrics.notStored.Inc()
		return result{resp: resp, prefix: body, status: missStatus(fwd, "too-large")}
	}
	e := newEntry(g, resp, body, d, now)
	e.Born = born
	if d.ESI && s.ESI {
		p.parseESI(g, e)
		p.storeInlines(g, key, e, now)
	}
	cookies := ownCookies(&resp.Header)
	releaseResponse(resp)
	vary := varySpec(s, d)
	e.Variant = string(appendVariant(nil, &req.Header, vary))
	p.cache.Insert(h, key, vary, e)
	p.metrics.stored.Inc()
	return result{entry: e, status: storedStatus(fwd), stored: true, setCookies: cookies}
}

func (p *Proxy) storeRevalidated(g *generation, s *site, req *fasthttp.Request, resp *fasthttp.Response, key string, h uint64, stale *cache.Entry, born, now int64) result {
	in := policyInput(req, resp, s, now, false)
	in.Status = stale.Status
	d := policy.Decide(&in)
	if !d.Store {
		// The 304 took freshness away: serve the validated body once.
		releaseResponse(resp)
		return result{entry: stale, status: []byte("ramjet; fwd=stale; fwd-status=304")}
	}
	e := revalidated(stale, resp, &d, now)
	e.Born = born
	releaseResponse(resp)
	vary := varySpec(s, &d)
	p.cache.Insert(h, key, vary, e)
	p.metrics.stored.Inc()
	return result{entry: e, status: csRevalidated, stored: true}
}

// rememberUncacheable marks a key hit-for-miss, so that the next requests
// do not queue behind one another; server errors are not remembered,
// they are usually transient.
func (p *Proxy) rememberUncacheable(g *generation, h uint64, key string, code int, now int64) {
	if g.cfg.HitForPass <= 0 || code >= 500 {
		return
	}
	p.cache.MarkPass(h, key, now+int64(g.cfg.HitForPass))
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

// storePrivateResult keeps an LSCache private response for its user only.
func (p *Proxy) storePrivateResult(g *generation, s *site, req *fasthttp.Request, resp *fasthttp.Response, d *policy.Decision, key string, id uint64, born, now int64) result {
	body, complete, err := readBody(resp, g.cfg.MaxObjectSize)
	if err != nil {
		releaseResponse(resp)
		return result{err: fmt.Errorf("proxy: fill %s: %w", key, err)}
	}
	if !complete {
		return result{resp: resp, prefix: body, status: missStatus(fwdMiss, "too-large")}
	}
	e := p.storePrivate(g, s, req, resp, body, d, []byte(key), id, born, now)
	cookies := ownCookies(&resp.Header)
	releaseResponse(resp)
	return result{entry: e, status: csStoredPrivate, setCookies: cookies}
}

// storePrivate inserts a private entry under the user's identity, with its
// tags in the user's namespace.
func (p *Proxy) storePrivate(g *generation, s *site, req *fasthttp.Request, resp *fasthttp.Response, body []byte, d *policy.Decision, key []byte, id uint64, born, now int64) *cache.Entry {
	e := newEntry(g, resp, body, d, now)
	e.Born = born
	e.Tags = privateTags(id, d.Tags)
	if d.ESI && s.ESI {
		p.parseESI(g, e)
	}
	vary := varySpec(s, d)
	e.Variant = string(appendVariant(nil, &req.Header, vary))
	pkey := appendPrivateKey(nil, id, key)
	p.private.Insert(p.private.Hash(pkey), string(pkey), vary, e)
	p.metrics.storedPrivate.Inc()
	return e
}
