package cache

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkPurgeTag: purging a tag costs the same whether 1 or 1,000,000
// entries carry it (one atomic store; entries are checked on their next hit).
func BenchmarkPurgeTag(b *testing.B) {
	for _, n := range []int{1, 1000, 100000, 1000000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			c := newTestCache(b, Config{Size: 4 << 30})
			for i := range n {
				e := testEntry("", 1, time.Hour)
				e.Tags = []string{"shared"}
				key := fmt.Sprintf("/p/%d", i)
				c.Insert(c.Hash([]byte(key)), key, VarySpec{}, e)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				c.PurgeTag("shared", false, 0)
			}
		})
	}
}

// BenchmarkStatusTags is the purge check a hit pays, by tags per entry.
func BenchmarkStatusTags(b *testing.B) {
	for _, n := range []int{0, 5, 50} {
		b.Run(fmt.Sprintf("tags=%d", n), func(b *testing.B) {
			c := newTestCache(b, Config{Size: 1 << 20})
			e := testEntry("", 10, time.Hour)
			for i := range n {
				e.Tags = append(e.Tags, fmt.Sprintf("tag-%d", i))
			}
			c.Insert(c.Hash([]byte("/t")), "/t", VarySpec{}, e)
			now := wallClock()
			b.ReportAllocs()
			for b.Loop() {
				if c.Status(e, now) != Fresh {
					b.Fatal("not fresh")
				}
			}
		})
	}
}
