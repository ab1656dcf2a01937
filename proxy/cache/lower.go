package cache

import (
	"hash/maphash"
	"math"
)

// A lower tier (the disk tier, proxy/cache/disk) keeps a copy of what the
// cache stores so that a restart finds it again. The cache tells it about
// every store and every purge; the tier copies off the request path and
// asks, before it writes, whether what it copies is still stored and not
// purged (Holds, Invalidated), so a store and a purge racing to the tier
// never leave a purged page on disk.
//
// A tier that is also a Fetcher gives back, on a miss, what RAM no longer
// holds (Fetch): the cache then holds more than RAM. So every purge
// reaches the tier twice (purgeAround): before RAM applies it, so a copy
// the tier gives back while the purge is on its way is in RAM, with its
// tags interned, when RAM applies it; and after, so a copy the tier's
// writer took while RAM still held the page goes too. Never is a purged
// page brought back behind the purge.

// Lower is a tier under the cache. Stored must not block; Purged must not
// lose the purge (a purge the tier missed would come back at restart).
// Seq numbers the purges: Stored gets the number of the last one handed
// to the tier before o was stored, so the tier knows which purges came
// after it (o may have left RAM by one, or been evicted, before the tier
// copies it).
type Lower interface {
	Stored(h uint64, o *Object, seq uint64)
	Purged(p Purge)
	Seq() uint64
}

// GapKeeper is a lower tier that keeps what a gap left stale as RAM
// does (gap.go): its copies filled up to at may be given back (Fetch) and
// served stale until until, and are deleted then. It must keep the mark
// across a restart or an upgrade (RestoreGap), or else delete them at
// once: a copy filled before a gap is never served fresh.
type GapKeeper interface {
	Gap(at, until int64)
}

// GapLister is a GapKeeper that lists the keys of its copies a gap
// still keeps stale (filled up to a gap whose grace runs), so the gap's
// warm-up refreshes them before their grace deletes them.
type GapLister interface {
	EachGapped(fn func(key string) bool)
}

// EachGappedLower calls fn with each key the lower tier keeps stale from
// a gap and RAM does not hold, until fn returns false.
func (c *Cache) EachGappedLower(fn func(h uint64, key string) bool) {
	l, ok := c.lower.(GapLister)
	if !ok {
		return
	}
	l.EachGapped(func(key string) bool {
		h := maphash.String(c.seed, key)
		if _, inRAM := c.store.Get(h); inRAM {
			return true // RAM's own warm-up (EachGapped) has it
		}
		return fn(h, key)
	})
}

// Backlogger is a lower tier that copies off the request path and drops
// copies when too many wait: work that may wait (a gap's warm-up) waits
// while it is Backlogged, so that what it refreshes reaches the tier.
type Backlogger interface {
	Backlogged() bool
}

// LowerBacklogged reports whether the lower tier has too many copies
// waiting to take more without dropping some.
func (c *Cache) LowerBacklogged() bool {
	b, ok := c.lower.(Backlogger)
	return ok && b.Backlogged()
}

// Fetcher is a lower tier that gives copies back.
type Fetcher interface {
	// Fetch stores in the cache (Promote) the copy of key (hashed h) the
	// tier holds, unless a purge covers it, and returns the object
	// stored; nil when it has none. A copy RAM evicted before the tier
	// wrote it is returned as it is, not stored again. It may block on
	// the disk.
	Fetch(h uint64, key []byte) *Object
}

// Fetch is Lookup for a request that may wait for the lower tier: on a
// miss in RAM, the tier's copy of key, brought back into RAM. Hot copies
// stay there by the store's admission (W-TinyLFU), the rest are read
// again from the tier.
func (c *Cache) Fetch(h uint64, key []byte) *Object {
	if o := c.Lookup(h, key); o != nil {
		return o
	}
	if f, ok := c.lower.(Fetcher); ok {
		return f.Fetch(h, key)
	}
	return nil
}

// Promote stores e, a copy the lower tier gave back, as Insert does but
// without handing it back to the tier, which holds it already. It returns
// the object stored, or nil when e was refused.
func (c *Cache) Promote(h uint64, key string, vary VarySpec, e *Entry) *Object {
	return c.insert(h, key, vary, e)
}

// Purge is one purge as a lower tier applies it: every stored object
// whose key Key accepts, or one of whose tags Tag accepts, and with a
// variant whose fill began at or before At, goes. Soft purges go too: a
// lower tier keeps no stale copies.
type Purge struct {
	Exact string                // one key; "" for the others
	Key   func(key string) bool // nil: not by key
	Tag   func(tag string) bool // nil: not by tag
	At    int64
}

// Everything matches every object.
func Everything(string) bool { return true }

// SetLower makes l the cache's lower tier. Call it before the cache is
// shared: the field is read without a lock.
func (c *Cache) SetLower(l Lower) { c.lower = l }

// Holds reports whether o is what the cache stores under h.
func (c *Cache) Holds(h uint64, o *Object) bool {
	cur, ok := c.store.Get(h)
	return ok && cur == o
}

// Invalidated reports whether a purge (hard or soft) came after e's fill
// began, or a gap whose grace ran out or that the lower tier does not
// keep (GapKeeper): e must not be kept as it is. An entry only a gap left
// stale is kept within the grace: the tier deletes it at its end.
func (c *Cache) Invalidated(e *Entry) bool {
	hard, soft := c.purged(e, c.Now())
	if hard || !soft {
		return hard
	}
	_, keeps := c.lower.(GapKeeper)
	// No hard purge came after e's fill began (purged said so): a purge
	// since it began is a soft one, not a gap.
	return !keeps || !c.Gapped(e) || c.InvalidatedSince(e, 0)
}

// lowerGap hands a gap to the lower tier: one that keeps gaps keeps its
// copies stale as RAM does; another has them deleted, since it keeps no
// stale copies.
func (c *Cache) lowerGap(at, until int64) {
	if g, ok := c.lower.(GapKeeper); ok {
		g.Gap(at, until)
		return
	}
	c.lowerPurge(Purge{Key: Everything, At: at})
}

// Expired reports whether e can no longer be served in any way at now.
func (e *Entry) Expired(now int64) bool { return e.expires() <= now }

func (c *Cache) lowerPurge(p Purge) {
	if c.lower != nil {
		c.lower.Purged(p)
	}
}

// keyIs matches one key (or tag).
func keyIs(key string) func(string) bool { return func(k string) bool { return k == key } }

// purgeAround hands p to the lower tier before and after apply, RAM's
// part of the purge.
func (c *Cache) purgeAround(p Purge, apply func()) {
	c.lowerPurge(p)
	apply()
	c.lowerPurge(p)
}

// always is At for purges of keys: whatever their age.
const always = math.MaxInt64
