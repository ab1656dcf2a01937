package cache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func taggedEntry(tags ...string) *Entry {
	e := testEntry("", 10, time.Hour)
	e.Tags = tags
	return e
}

func TestStatusAfterPurges(t *testing.T) {
	tests := []struct {
		name  string
		purge func(c *Cache)
		want  Status
	}{
		{"untouched entry is fresh", func(c *Cache) {}, Fresh},
		{"hard tag purge removes", func(c *Cache) { c.PurgeTag("post-1", false, 0) }, Purged},
		{"soft tag purge makes stale", func(c *Cache) { c.PurgeTag("post-1", true, 0) }, Stale},
		{"purge of another tag leaves it", func(c *Cache) { c.PurgeTag("post-2", false, 0) }, Fresh},
		{"tag prefix purge", func(c *Cache) {
			c.PurgeTagsMatching(func(s string) bool { return strings.HasPrefix(s, "post-") }, false, 0)
		}, Purged},
		{"hard purge all", func(c *Cache) { c.PurgeAll(false, 0) }, Purged},
		{"soft purge all", func(c *Cache) { c.PurgeAll(true, 0) }, Stale},
		{"soft then hard is gone", func(c *Cache) { c.PurgeTag("home", true, 0); c.PurgeTag("post-1", false, 0) }, Purged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: 1 << 20})
			e := taggedEntry("post-1", "home")
			insert(c, "/a", VarySpec{}, e)
			tt.purge(c)
			if got := c.Status(e, wallClock()); got != tt.want {
				t.Fatalf("status %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEntryStoredAfterPurgeButFilledBeforeIsPurged(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	insert(c, "/other", VarySpec{}, taggedEntry("post-1")) // the tag exists
	born := wallClock()
	c.PurgeTag("post-1", false, 0) // purge while the fill is in flight
	e := taggedEntry("post-1")
	e.Born = born
	insert(c, "/a", VarySpec{}, e)
	if got := c.Status(e, wallClock()); got != Purged {
		t.Fatalf("entry whose fill began before the purge: status %d, want Purged", got)
	}
}

func TestPurgeTagIsO1(t *testing.T) {
	c := newTestCache(t, Config{Size: 256 << 20})
	for i := range 20000 {
		insert(c, fmt.Sprintf("/p/%d", i), VarySpec{}, taggedEntry("shared", fmt.Sprintf("own-%d", i)))
	}
	if !c.PurgeTag("shared", false, 0) {
		t.Fatal("tag held by 20000 entries not found")
	}
	if c.PurgeTag("never-stored", false, 0) {
		t.Fatal("purge of an unknown tag reported a match")
	}
}

func TestPurgeKeysByPrefixAndSoftURL(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	ha := insert(c, "http://h/blog/a", VarySpec{}, testEntry("", 10, time.Hour))
	hb := insert(c, "http://h/blog/b", VarySpec{}, testEntry("", 10, time.Hour))
	hc := insert(c, "http://h/shop/c", VarySpec{}, testEntry("", 10, time.Hour))
	n := c.PurgeKeys(func(k string) bool { return strings.HasPrefix(k, "http://h/blog/") }, false)
	if n != 2 || c.Lookup(ha, []byte("http://h/blog/a")) != nil || c.Lookup(hb, []byte("http://h/blog/b")) != nil {
		t.Fatalf("prefix purge removed %d", n)
	}
	if !c.PurgeKey(hc, []byte("http://h/shop/c"), true) {
		t.Fatal("soft URL purge found nothing")
	}
	o := c.Lookup(hc, []byte("http://h/shop/c"))
	if o == nil || c.Status(o.Variants[0], wallClock()) != Stale {
		t.Fatal("soft URL purge should leave a stale, servable entry")
	}
}

func TestTagStatesDoNotLeak(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	for i := range 1000 {
		key := fmt.Sprintf("/u/%d", i)
		h := insert(c, key, VarySpec{}, taggedEntry(fmt.Sprintf("url-%d", i)))
		c.Remove(h, []byte(key))
	}
	testbed.Poll(5*time.Second, func() bool { runtime.GC(); return c.Tags() <= 10 })
	if n := c.Tags(); n > 10 {
		t.Fatalf("%d tag states left after their entries were removed", n)
	}
}
