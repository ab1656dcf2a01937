package cache

import "math"

// A lower tier (the disk tier, proxy/cache/disk) keeps a copy of what the
// cache stores so that a restart finds it again. The cache tells it about
// every store and every purge; the tier copies off the request path and
// asks, before it writes, whether what it copies is still stored and not
// purged (Holds, Invalidated), so a store and a purge racing to the tier
// never leave a purged page on disk.

// Lower is a tier under the cache. Stored must not block; Purged must not
// lose the purge (a purge the tier missed would come back at restart).
type Lower interface {
	Stored(h uint64, o *Object)
	Purged(p Purge)
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

// Invalidated reports whether a purge (hard or soft) or a gap came after
// e's fill began: e must not be kept as it is.
func (c *Cache) Invalidated(e *Entry) bool {
	hard, soft := c.purged(e, c.Now())
	return hard || soft
}

// Expired reports whether e can no longer be served in any way at now.
func (e *Entry) Expired(now int64) bool { return e.expires() <= now }

func (c *Cache) lowerPurge(p Purge) {
	if c.lower != nil {
		c.lower.Purged(p)
	}
}

// keyIs matches one key.
func keyIs(key string) func(string) bool { return func(k string) bool { return k == key } }

func (c *Cache) lowerPurgeKey(key []byte) {
	if c.lower != nil {
		c.lower.Purged(Purge{Exact: string(key), At: always})
	}
}

// always is At for purges of keys: whatever their age.
const always = math.MaxInt64
