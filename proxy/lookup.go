package proxy

import (
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// stageLookup looks for the request's copy: the user's private one first,
// then the shared one. A fresh copy is the answer; a stale one is too,
// while one background request refreshes it. Anything else leaves fill
// what to do: the stale copy to revalidate, why the cache missed, and
// whether concurrent misses share one fill.
func stageLookup(r *request) verdict {
	if r.pass != nil {
		return proceed
	}
	r.now = r.s.cache.Now()
	if r.p.privateUsed.Load() {
		if e := r.privateCopy(); e != nil {
			if r.inline && e.Doc != nil {
				return declined // an ESI page may have fragments to fetch
			}
			r.tally(r.c.hitPrivate, outHit)
			return r.answer(e, csHitPrivate)
		}
	}
	if r.frag != nil && r.frag.private {
		return r.toFill(nil, fwdMiss, false) // never shared: nothing to wait for
	}
	o := r.s.cache.Lookup(r.h, r.key)
	if o == nil && !r.inline { // an inline request must not wait for the disk
		o = r.s.cache.Fetch(r.h, r.key) // the disk tier's copy: a hit too
	}
	switch {
	case o == nil:
		return r.toFill(nil, fwdMiss, true)
	case o.PassUntil > r.now:
		if r.inline {
			return declined
		}
		r.tally(r.c.pass, outPass)
		r.passUntil = o.PassUntil
		return r.toFill(nil, fwdURIMiss, false)
	}
	r.selectVariant(&o.Vary)
	e := o.Variant(r.variant)
	if e == nil {
		e = r.languageVariant(o)
	}
	if e == nil {
		return r.toFill(nil, fwdVaryMiss, true)
	}
	if r.authorized && !e.Shared {
		// Not meant for requests with credentials: this one fetches its
		// own, stored only if it says it may be shared (RFC 9111 3.5).
		return r.toFill(nil, fwdMiss, false)
	}
	return r.lookedUp(e)
}

// lookedUp decides by the status of the request's variant e.
func (r *request) lookedUp(e *cache.Entry) verdict {
	e.Popularity().Touch(r.now) // what a purge's warm-up fetches first (warmup.go)
	switch r.s.cache.Status(e, r.now) {
	case cache.Fresh:
		if r.inline && e.Doc != nil {
			return declined
		}
		r.tally(r.c.hit, outHit)
		return r.answer(e, csHit)
	case cache.Stale:
		if r.inline {
			return declined
		}
		if !r.inspect() {
			return answered // its refresh would take the request upstream
		}
		r.tally(r.c.stale, outHit)
		r.refresh(e)
		return r.answer(e, csStale)
	case cache.ErrorOnly, cache.Revalidate:
		return r.toFill(e, fwdStale, true)
	case cache.Purged:
		return r.toFill(nil, fwdMiss, true)
	default:
		return r.toFill(nil, fwdStale, true)
	}
}

// selectVariant sets r.variant to the request's values for v.
func (r *request) selectVariant(v *cache.VarySpec) {
	if r.frag != nil && !r.frag.ownHeader {
		f := r.frag.f
		f.mu.Lock() // the page's snapshot, shared by its fragments
		r.variant = appendVariant(r.variant[:0], &f.hdr, v)
		f.mu.Unlock()
		return
	}
	r.variant = appendVariant(r.variant[:0], r.header(), v)
}

// toFill leaves the request to fill; an inline request declines.
func (r *request) toFill(stale *cache.Entry, fwd string, coalesce bool) verdict {
	if r.inline {
		return declined
	}
	r.stale, r.fwd, r.coalesce = stale, fwd, coalesce
	return proceed
}

// privateCopy is the client's own fresh copy from the (non-empty)
// private cache, or nil. A client without a session has none.
func (r *request) privateCopy() *cache.Entry {
	pc := r.p.private
	if r.identity() == 0 {
		return nil
	}
	r.pkey = appendPrivateKey(r.pkey[:0], r.id, r.key)
	o := pc.Lookup(pc.Hash(r.pkey), r.pkey)
	if o == nil {
		return nil
	}
	r.selectVariant(&o.Vary)
	e := o.Variant(r.variant)
	if e == nil || pc.Status(e, r.now) != cache.Fresh {
		return nil
	}
	return e
}

// freshShared is the request's fresh variant in the shared cache now, or
// nil: what a fill that just ended stored.
func (r *request) freshShared() *cache.Entry {
	o := r.s.cache.Lookup(r.h, r.key)
	if o == nil {
		return nil
	}
	r.selectVariant(&o.Vary)
	e := o.Variant(r.variant)
	r.now = r.s.cache.Now() // what the answer's Age is counted from
	if e == nil || r.authorized && !e.Shared || r.s.cache.Status(e, r.now) != cache.Fresh {
		return nil
	}
	return e
}
