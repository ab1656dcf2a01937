package cache

import (
	"strings"
	"time"
)

// A gap is what a node marks when it learns it may have missed purges it
// cannot name (a Redis restart lost the fan-out stream): every entry it
// holds may be out of date, but emptying the cache would send every
// visitor of every site to the origins at once. So each entry filled
// before the gap is served stale while one request refreshes it (as
// after a soft purge of everything), and not at all once the grace has
// run out: a missed purge is never honoured later than that.

// gapMark is one gap: entries whose fill began at or before at are
// stale until until, then gone.
type gapMark struct{ at, until int64 }

// MarkGap marks every entry filled up to now stale for grace, then gone.
// A gap while an earlier one is still in its grace keeps the earlier
// deadline for all of them: nothing is served stale past the first
// missed purge's bound. It reports how many objects the cache held.
func (c *Cache) MarkGap(grace time.Duration) int {
	now := c.Now()
	c.gapMu.Lock()
	defer c.gapMu.Unlock()
	until := now + int64(grace)
	if old := c.gap.Load(); old != nil {
		if old.until <= now {
			raise(&c.allHard, old.at) // its grace is over: its entries stay gone
		} else {
			until = min(until, old.until)
		}
	}
	c.gap.Store(&gapMark{at: now, until: until})
	c.lowerGap(now, until)
	return c.Len()
}

// RestoreGap puts back a gap a lower tier kept across a restart or an
// upgrade (GapKeeper): entries filled up to at are stale until until,
// gone after it, as if MarkGap had run at at here. It never loosens a
// mark this cache holds already.
func (c *Cache) RestoreGap(at, until int64) {
	c.gapMu.Lock()
	defer c.gapMu.Unlock()
	if until <= c.Now() {
		raise(&c.allHard, at)
		return
	}
	if old := c.gap.Load(); old != nil {
		at, until = max(at, old.at), min(until, old.until)
	}
	c.gap.Store(&gapMark{at: at, until: until})
}

// Gapped reports whether e is served only because of a gap's grace: a
// refresh of it is one the gap caused.
func (c *Cache) Gapped(e *Entry) bool {
	g := c.gap.Load()
	return g != nil && g.at >= e.born()
}

// born is when the fill that produced e began (its store time for an
// entry made without one).
func (e *Entry) born() int64 {
	if e.Born == 0 {
		return e.Stored
	}
	return e.Born
}

// EachGapped calls fn with every plain entry a gap left stale that may
// still be served (the variant no request header selects: one a request
// of the key's URL alone would fill again), with its object's key and
// hash, until fn returns false. It scans the cache.
func (c *Cache) EachGapped(fn func(h uint64, key string, e *Entry) bool) {
	g := c.gap.Load()
	if g == nil {
		return
	}
	now := c.Now()
	for h, o := range c.store.c.All() {
		if o.PassUntil != 0 {
			continue
		}
		for _, e := range o.Variants {
			if c.plainGapped(g, e, now) && !fn(h, o.Key, e) {
				return
			}
		}
	}
}

// PlainGapped is o's plain entry a gap left stale (as EachGapped lists
// them), or nil: for a copy the lower tier gave back.
func (c *Cache) PlainGapped(o *Object) *Entry {
	g := c.gap.Load()
	if g == nil {
		return nil
	}
	now := c.Now()
	for _, e := range o.Variants {
		if c.plainGapped(g, e, now) {
			return e
		}
	}
	return nil
}

// plainGapped: e is the plain variant, filled before gap g, and stale.
func (c *Cache) plainGapped(g *gapMark, e *Entry, now int64) bool {
	return g.at >= e.born() && strings.Trim(e.Variant, "\x00") == "" && c.Status(e, now) == Stale
}
