//go:build !race

package cache

import (
	"testing"
	"time"
)

// TestTouchDoesNotAllocate: counting a hit's request allocates nothing.
func TestTouchDoesNotAllocate(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	e := testEntry("", 10, time.Hour)
	c.Insert(c.Hash([]byte("/p")), "/p", VarySpec{}, e)
	now := c.Now()
	if n := testing.AllocsPerRun(1000, func() { e.Popularity().Touch(now) }); n != 0 {
		t.Fatalf("touch allocates %v times", n)
	}
}
