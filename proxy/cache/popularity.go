package cache

import (
	"iter"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Popularity is how often an entry has been asked for lately, so that
// what a purge drops can be fetched again most requested first (the
// proxy's warm-up). It is Redis's LFU counter: one 32-bit word holding a
// minute stamp and an 8-bit count that counts every request up to
// popLinear, then logarithmically (each further one with a probability
// falling as the count grows), and loses one per minute without
// requests. A hot page's requests therefore rarely write: its word stays
// in every core's cache. An entry's successors (a refill, a soft purge's
// stale copy) share it, so a page keeps its history across refreshes.
type Popularity struct {
	v atomic.Uint32 // minute<<8 | count
}

const (
	// popLinear is the count up to which every request counts: small
	// differences between rarely asked pages stay exact.
	popLinear = 32
	// popFactor slows the count past popLinear: it reaches 255 after
	// about 100,000 requests.
	popFactor = 4
	popMax    = 255
)

// Touch counts one request at now (unix nanoseconds). It does not
// allocate; a nil p counts nothing.
func (p *Popularity) Touch(now int64) {
	if p == nil {
		return
	}
	v := p.v.Load()
	minute := popMinute(now)
	n := popDecayed(v, minute)
	if n < popLinear || n < popMax && rand.Uint32() < math.MaxUint32/((n-popLinear+1)*popFactor) {
		n++
	}
	if w := minute<<8 | n; w != v {
		p.v.CompareAndSwap(v, w) // lost to a concurrent touch: one count less
	}
}

// Score is the decayed count at now: 0 for an entry nobody asked for
// lately, up to 255.
func (p *Popularity) Score(now int64) uint32 {
	if p == nil {
		return 0
	}
	return popDecayed(p.v.Load(), popMinute(now))
}

// Adopt makes p at least as popular as from (an earlier copy of its page
// that a purge dropped): a page fetched again after a purge keeps its
// rank for the next one.
func (p *Popularity) Adopt(from *Popularity, now int64) {
	if p == nil || from == nil {
		return
	}
	for {
		v := p.v.Load()
		n := max(popDecayed(v, popMinute(now)), from.Score(now))
		if p.v.CompareAndSwap(v, popMinute(now)<<8|n) {
			return
		}
	}
}

func popMinute(now int64) uint32 { return uint32(now/int64(time.Minute)) & 0xffffff }

// popDecayed is v's count less one per minute since its stamp.
func popDecayed(v, minute uint32) uint32 {
	n, elapsed := v&0xff, (minute-v>>8)&0xffffff
	if elapsed >= n {
		return 0
	}
	return n - elapsed
}

// Popularity is e's request count (nil for an entry never stored).
func (e *Entry) Popularity() *Popularity { return e.pop }

// givePopularity gives a new entry e its counter: the one of the variant
// it replaces in old, else a new one. Like tags, on insert only.
func givePopularity(e *Entry, old *Object) {
	if e.pop != nil {
		return
	}
	if old != nil {
		for _, v := range old.Variants {
			if v.Variant == e.Variant && v.pop != nil {
				e.pop = v.pop
				return
			}
		}
	}
	e.pop = new(Popularity)
}

// All yields every object the store holds with its hash, for scans off
// the request path (the warm-up's search for what a purge invalidated).
func (c *Cache) All() iter.Seq2[uint64, *Object] { return c.store.c.All() }

// InvalidatedSince reports whether a purge of everything or of one of
// e's tags (hard or soft) at or after since came after e's fill began:
// what a purge since then dropped or made stale. A fan-out gap is not a
// purge here: its warm-up is its own (the proxy's gapwarm).
func (c *Cache) InvalidatedSince(e *Entry, since int64) bool {
	born := e.born()
	hit := func(t int64) bool { return t >= born && t >= since }
	if hit(c.allHard.Load()) || hit(c.allSoft.Load()) {
		return true
	}
	for _, t := range e.tags {
		if hit(t.hard.Load()) || hit(t.soft.Load()) {
			return true
		}
	}
	return false
}

// A drop observer learns of the objects a purge removes or softens at
// once (a key, a prefix, a hard purge of everything), which a later scan
// could not find: the warm-up's candidates. Purges by tag leave their
// entries in place, found by InvalidatedSince.
type dropObserver func(h uint64, o *Object)

// OnDrop makes fn the cache's drop observer (nil: none). fn runs on the
// purge's goroutine, after the object left, and must not block or call
// back into the cache.
func (c *Cache) OnDrop(fn func(h uint64, o *Object)) {
	if fn == nil {
		c.dropped.Store(nil)
		return
	}
	d := dropObserver(fn)
	c.dropped.Store(&d)
}

// observeDrop tells the observer, if any, that o left.
func (c *Cache) observeDrop(h uint64, o *Object) {
	if fn := c.dropped.Load(); fn != nil && o != nil && o.PassUntil == 0 {
		(*fn)(h, o)
	}
}

// observesDrops reports whether an observer wants dropped objects.
func (c *Cache) observesDrops() bool { return c.dropped.Load() != nil }
