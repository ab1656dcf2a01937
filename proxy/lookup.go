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
	e, how := r.find(true)
	switch how {
	case foundPrivate, foundFresh:
		return r.hit(e, how)
	case foundStale:
		if !r.inspect() {
			return answered // its refresh would take the request upstream
		}
		r.tally(r.c.stale, outHit)
		r.refresh(e)
		return r.answer(e, csStale)
	case foundPass:
		r.tally(r.c.pass, outPass)
	}
	return proceed
}

// stageLookupInline answers an inline request with a fresh copy in RAM
// (it must not wait for a copy only the disk holds) that is no ESI page
// (whose fragments may have to be fetched); anything else is declined.
// On a plain HTTP/1.1 connection (package h1, its own goroutine) the
// copy's body may still go out from the tier's file that holds it
// (find, sendsFiles); an HTTP/2 stream never sends from a file.
func stageLookupInline(r *request) verdict {
	if e, how := r.find(false); (how == foundPrivate || how == foundFresh) && e.Doc == nil {
		return r.hit(e, how)
	}
	return declined
}

// lookTime is the cache's time for look: an inline request's context
// read the clock as it started, microseconds ago, and a read of it costs
// what a tenth of a hit's own code does.
func (r *request) lookTime() int64 {
	if r.kind == kindInline {
		return r.s.cache.NowFrom(r.ctx.Time())
	}
	return r.s.cache.Now()
}

// lookupPart is what lookup found: the request's variant values, its
// private key, the time it looked, and what it leaves fill.
type lookupPart struct {
	now     int64  // when lookup looked; what a hit's Age is counted from
	variant []byte // the values the entry's vary spec selects
	pkey    []byte // private cache key
	handoff handoff
	lent    *cache.Object   // the disk tier's copy lent to look, its bodies in a file
	file    *cache.BodyFile // the disk tier's file of filed, the copy in RAM found (ramfile.go)
	filed   *cache.Entry
}

// handoff is what lookup leaves fill (toFill), the one hand-off between
// stages: the stale copy to revalidate (or to serve if the origin
// fails), the Cache-Status fwd reason, and whether concurrent misses of
// the key share one fill.
type handoff struct {
	stale    *cache.Entry
	fwd      string
	coalesce bool
	// passUntil: the URL's hit-for-pass marker lookup found lasts until
	// then (0: none).
	passUntil int64
}

func newLookupPart() lookupPart {
	return lookupPart{variant: make([]byte, 0, 64), pkey: make([]byte, 0, 256)}
}

func (l *lookupPart) reset() {
	l.now = 0
	l.variant = l.variant[:0]
	l.pkey = l.pkey[:0]
	l.handoff.stale, l.handoff.fwd, l.handoff.coalesce, l.handoff.passUntil = nil, "", false, 0
	l.lent = nil       // find hands it on or closes its file
	if l.file != nil { // not served (bodyFile): given back
		l.file.Close()
		l.file, l.filed = nil, nil
	}
}

// found is what lookup found of the request's copy.
type found uint8

const (
	foundNone    found = iota // nothing to answer with: the hand-off says what fill does
	foundPrivate              // the user's own fresh copy
	foundFresh                // a fresh shared copy
	foundStale                // a stale shared copy, served while one refresh runs
	foundPass                 // the URL is remembered as uncacheable (hit-for-pass)
)

// hit answers the request with e, a fresh copy.
func (r *request) hit(e *cache.Entry, how found) verdict {
	if how == foundPrivate {
		r.tally(r.c.hitPrivate, outHit)
		return r.answer(e, csHitPrivate)
	}
	r.tally(r.c.hit, outHit)
	return r.answer(e, csHit)
}

// look looks the request's copy up and says what it found; disk: it may
// wait for the disk tier's copy of what RAM does not hold, lent (lent)
// when lend (sendfile.go). It changes
// nothing but the request (and the copy's popularity): where it leaves
// fill the work, it sets the hand-off (toFill).
func (r *request) look(disk, lend bool) (*cache.Entry, found) {
	r.now = r.lookTime()
	if r.p.privateUsed.Load() {
		if e := r.privateCopy(); e != nil {
			return e, foundPrivate
		}
	}
	if r.frag.private {
		return r.toFill(nil, fwdMiss, false) // never shared: nothing to wait for
	}
	o := r.s.cache.Lookup(r.h, r.key)
	if o == nil && disk {
		o = r.fromDisk(lend) // the disk tier's copy: a hit too
	}
	switch {
	case o == nil:
		return r.toFill(nil, fwdMiss, true)
	case o.PassUntil > r.now:
		r.handoff.passUntil = o.PassUntil
		r.toFill(nil, fwdURIMiss, false)
		return nil, foundPass
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
	e.Popularity().Touch(r.now) // what a purge's warm-up fetches first (warmup.go)
	switch r.s.cache.Status(e, r.now) {
	case cache.Fresh:
		return e, foundFresh
	case cache.Stale:
		return e, foundStale
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
	if r.frag.pageHeader {
		f := r.frag.f
		f.mu.Lock() // the page's snapshot, shared by its fragments
		r.variant = appendVariant(r.variant[:0], &f.hdr, v)
		f.mu.Unlock()
		return
	}
	r.variant = appendVariant(r.variant[:0], r.header(), v)
}

// toFill leaves the request to fill: the one hand-off between stages.
func (r *request) toFill(stale *cache.Entry, fwd string, coalesce bool) (*cache.Entry, found) {
	r.handoff.stale, r.handoff.fwd, r.handoff.coalesce = stale, fwd, coalesce
	return nil, foundNone
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
