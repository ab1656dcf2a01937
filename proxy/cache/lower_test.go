package cache

import (
	"testing"
	"time"
)

// firstLower records, when a purge reaches it, whether RAM still served
// the entry the purge covers: a lower tier that gives copies back must
// get every purge before RAM applies it, and again after (lower.go).
type firstLower struct {
	c      *Cache
	h      uint64
	key    string
	before []bool
}

func (l *firstLower) Stored(uint64, *Object, uint64) {}
func (l *firstLower) Seq() uint64                    { return 0 }
func (l *firstLower) Purged(Purge) {
	servable := false
	if o := l.c.Lookup(l.h, []byte(l.key)); o != nil && o.PassUntil == 0 {
		if e := o.Variant(nil); e != nil {
			servable = l.c.Status(e, l.c.Now()) == Fresh
		}
	}
	l.before = append(l.before, servable)
}

func TestPurgesReachTheLowerTierBeforeAndAfterRAM(t *testing.T) {
	const key = "http://s/1"
	tests := []struct {
		name  string
		purge func(c *Cache, h uint64)
	}{
		{"tag", func(c *Cache, _ uint64) { c.PurgeTag("t", false, 0) }},
		{"soft tag", func(c *Cache, _ uint64) { c.PurgeTag("t", true, 0) }},
		{"tag pattern", func(c *Cache, _ uint64) { c.PurgeTagsMatching(func(s string) bool { return s == "t" }, false, 0) }},
		{"key", func(c *Cache, h uint64) { c.PurgeKey(h, []byte(key), false) }},
		{"keys", func(c *Cache, _ uint64) { c.PurgeKeys(func(k string) bool { return k == key }, false) }},
		{"remove", func(c *Cache, h uint64) { c.Remove(h, []byte(key)) }},
		{"now uncacheable", func(c *Cache, h uint64) { c.MarkPass(h, key, wallClock()+int64(time.Minute)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: 1 << 20})
			h := c.Hash([]byte(key))
			l := &firstLower{c: c, h: h, key: key}
			c.SetLower(l)
			e := testEntry("", 10, time.Hour)
			e.Tags = []string{"t"}
			e.Born = wallClock() - 1
			c.Insert(h, key, VarySpec{}, e)
			tt.purge(c, h)
			if len(l.before) != 2 || !l.before[0] || l.before[1] {
				t.Fatalf("RAM served the page when the purges reached the lower tier: %v, want [true false]: "+
					"a copy the tier gives back before, or copies while RAM holds it, would escape the purge", l.before)
			}
		})
	}
}
