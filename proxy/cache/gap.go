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

// gapMark is the last gap: entries whose fill began at or before at are
// stale until until, then gone. An earlier gap still in its grace when
// it came is kept beside it (prevAt, prevUntil; 0: none): its entries
// keep its deadline, while those filled since (its warm-up's refreshes)
// may have missed only the purges of the last one, and get its grace.
// More earlier gaps merge into one (the later at, the earlier until).
type gapMark struct{ at, until, prevAt, prevUntil int64 }

// deadline is when an entry whose fill began at born, up to g.at, is gone.
func (g *gapMark) deadline(born int64) int64 {
	if g.prevAt >= born {
		return min(g.until, g.prevUntil)
	}
	return g.until
}

// MarkGap marks every entry filled up to now stale for grace, then gone.
// A gap while an earlier one is still in its grace keeps the earlier
// deadline for the entries filled up to it: nothing is served stale past
// the first missed purge's bound. It reports how many objects the cache
// held.
func (c *Cache) MarkGap(grace time.Duration) int {
	now := c.Now()
	c.gapMu.Lock()
	defer c.gapMu.Unlock()
	until := now + int64(grace)
	c.gap.Store(c.withGap(c.gap.Load(), now, until, now))
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
	c.gap.Store(c.withGap(c.gap.Load(), at, until, c.Now()))
}

// withGap is g with the gap (at, until) added: the last gap and the
// earlier ones still in their grace, merged. A gap whose grace is over
// raises allHard instead: its entries stay gone. The caller holds gapMu.
func (c *Cache) withGap(g *gapMark, at, until, now int64) *gapMark {
	marks := [][2]int64{{at, until}}
	if g != nil {
		marks = append(marks, [2]int64{g.at, g.until})
		if g.prevAt != 0 {
			marks = append(marks, [2]int64{g.prevAt, g.prevUntil})
		}
	}
	var n *gapMark
	for _, m := range marks {
		switch {
		case m[1] <= now:
			raise(&c.allHard, m[0])
		case n == nil:
			n = &gapMark{at: m[0], until: m[1]}
		case m[0] > n.at: // a later gap: the one kept so far is earlier
			later := &gapMark{at: m[0], until: m[1], prevAt: n.at, prevUntil: n.until}
			n = later.merge(n.prevAt, n.prevUntil)
		default:
			n = n.merge(m[0], m[1])
		}
	}
	return n
}

// merge is g with an earlier gap (at, until) merged into its earlier one.
func (g *gapMark) merge(at, until int64) *gapMark {
	switch {
	case at == 0:
	case g.prevAt == 0:
		g.prevAt, g.prevUntil = at, until
	default:
		g.prevAt, g.prevUntil = max(g.prevAt, at), min(g.prevUntil, until)
	}
	return g
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
