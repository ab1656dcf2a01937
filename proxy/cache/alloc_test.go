//go:build !race

package cache

import (
	"testing"
	"time"
)

// TestLookupHitDoesNotAllocate enforces the hit path's promise: hashing
// the key, confirming it and picking the variant allocate nothing.
func TestLookupHitDoesNotAllocate(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	key := []byte("/blog/2024/hello-world/?utm=x")
	variant := []byte("br")
	h := c.Hash(key)
	c.Insert(h, string(key), aeVary, testEntry("gzip", 30<<10, time.Hour))
	c.Insert(h, string(key), aeVary, testEntry("br", 30<<10, time.Hour))

	var missed bool
	n := testing.AllocsPerRun(1000, func() {
		o := c.Lookup(c.Hash(key), key)
		if o == nil || o.Variant(variant) == nil {
			missed = true
		}
	})
	if missed {
		t.Fatal("lookup of a stored key and variant missed")
	}
	if n != 0 {
		t.Fatalf("hit allocates %v times, want 0", n)
	}
}

// TestStatusWithTagsDoesNotAllocate: the purge check on a hit reads one
// atomic per tag.
func TestStatusWithTagsDoesNotAllocate(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	tags := make([]string, 50)
	for i := range tags {
		tags[i] = "tag-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	e := testEntry("", 10, time.Hour)
	e.Tags = tags
	c.Insert(c.Hash([]byte("/t")), "/t", VarySpec{}, e)
	now := wallClock()
	if n := testing.AllocsPerRun(1000, func() { _ = c.Status(e, now) }); n != 0 {
		t.Fatalf("status check allocates %v times", n)
	}
}
