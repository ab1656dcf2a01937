package cache

import (
	"sync/atomic"

	"github.com/maypok86/otter/v2"
)

// PurgeTag invalidates every entry carrying tag (soft: marks it stale)
// whose fill began before at (unix nanos; 0 = now). It reports whether any
// entry carried the tag. O(1) in the number of entries.
func (c *Cache) PurgeTag(tag string, soft bool, at int64) bool {
	at = c.orNow(at)
	hit := false
	c.purgeAround(Purge{Tag: keyIs(tag), At: at}, func() { hit = c.tags.purge(tag, soft, at) })
	return hit
}

// PurgeTagsMatching purges every tag name match accepts (wildcard tag
// purges) and returns how many there were. It scans tags, not entries.
func (c *Cache) PurgeTagsMatching(match func(tag string) bool, soft bool, at int64) int {
	at = c.orNow(at)
	n := 0
	c.purgeAround(Purge{Tag: match, At: at}, func() { n = c.tags.purgeMatching(match, soft, at) })
	return n
}

// PurgeAll invalidates everything filled before at (0 = now); a hard purge
// of everything up to now also frees the memory at once.
func (c *Cache) PurgeAll(soft bool, at int64) {
	now := c.orNow(at)
	c.purgeAround(Purge{Key: Everything, At: now}, func() {
		if soft {
			raise(&c.allSoft, now)
			return
		}
		raise(&c.allHard, now)
		if at == 0 {
			if c.observesDrops() {
				for h, o := range c.store.c.All() {
					c.observeDrop(h, o)
				}
			}
			c.store.c.InvalidateAll()
		}
	})
}

func (c *Cache) orNow(at int64) int64 {
	if at == 0 {
		return c.Now()
	}
	return at
}

// PurgeKeys purges every object whose primary key match accepts and
// returns how many. It scans the cache: prefix purges are rare.
func (c *Cache) PurgeKeys(match func(key string) bool, soft bool) int {
	n := 0
	// The lower tier may hold keys RAM no longer does.
	c.purgeAround(Purge{Key: match, At: always}, func() {
		var hs []uint64
		for h, o := range c.store.c.All() {
			if o.PassUntil == 0 && match(o.Key) {
				hs = append(hs, h)
			}
		}
		for _, h := range hs {
			if c.purgeObject(h, match, soft) {
				n++
			}
		}
	})
	return n
}

// PurgeKey purges every variant of one primary key.
func (c *Cache) PurgeKey(h uint64, key []byte, soft bool) bool {
	k, done := string(key), false
	c.purgeAround(Purge{Exact: k, At: always}, func() { done = c.purgeObject(h, keyIs(k), soft) })
	return done
}

// purgeObject removes the object under h (soft: replaces its variants
// with stale copies), under the bucket lock and only if match accepts its
// key, so a concurrent insert of another key is never touched.
func (c *Cache) purgeObject(h uint64, match func(string) bool, soft bool) bool {
	var gone *Object
	now := c.Now()
	c.store.c.ComputeIfPresent(h, func(o *Object) (*Object, otter.ComputeOp) {
		if o.PassUntil > 0 || !match(o.Key) {
			return o, otter.CancelOp
		}
		gone = o
		if !soft {
			return nil, otter.InvalidateOp
		}
		n := o.softened(now)
		n.tally(1)
		return n, otter.WriteOp
	})
	c.observeDrop(h, gone) // outside the bucket lock
	return gone != nil
}

// softened is o with every fresh variant made stale at now, servable while
// one request refreshes it.
func (o *Object) softened(now int64) *Object {
	n := &Object{Key: o.Key, Vary: o.Vary, Variants: make([]*Entry, len(o.Variants))}
	for i, e := range o.Variants {
		c := *e
		if c.FreshUntil > now {
			c.StaleUntil = max(c.StaleUntil, c.FreshUntil)
			c.FreshUntil = now
		}
		n.Variants[i] = &c
	}
	o.copyUses(n)
	n.account()
	return n
}

// Tags is the number of distinct tags held by stored entries.
func (c *Cache) Tags() int { return c.tags.len() }

// raise moves t forward to now; purge times never go back.
func raise(t *atomic.Int64, now int64) {
	for {
		old := t.Load()
		if old >= now || t.CompareAndSwap(old, now) {
			return
		}
	}
}
