package cache

import (
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a cache clock that moves only when a test says so.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() int64                      { return c.ns.Load() }
func (c *fakeClock) Advance(d time.Duration)         { c.ns.Add(int64(d)) }
func (c *fakeClock) entry(life time.Duration) *Entry { return entryAt(c.Now(), life) }

func TestInjectedClockDecidesStatus(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	e := clk.entry(time.Minute)
	if got := c.Status(e, c.Now()); got != Fresh {
		t.Fatalf("Status at store time = %v, want Fresh", got)
	}
	clk.Advance(2 * time.Minute)
	if got := c.Status(e, c.Now()); got != Gone {
		t.Fatalf("Status two minutes on = %v, want Gone", got)
	}
}

// TestNowFromTakesTheCallersReadingOnlyOnTheWallClock: a request's
// reading of the wall clock stands for the cache's time, unless it is
// missing or the cache runs on a clock of its own.
func TestNowFromTakesTheCallersReadingOnlyOnTheWallClock(t *testing.T) {
	read := time.Now().Add(-time.Millisecond)
	wall := newTestCache(t, Config{Size: 1 << 20})
	if got := wall.NowFrom(read); got != read.UnixNano() {
		t.Errorf("wall clock: NowFrom = %d, want the reading %d", got, read.UnixNano())
	}
	if got := wall.NowFrom(time.Time{}); got < read.UnixNano() {
		t.Errorf("wall clock, no reading: NowFrom = %d, want now (after %d)", got, read.UnixNano())
	}
	clk := newFakeClock()
	own := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	if got := own.NowFrom(read); got != clk.Now() {
		t.Errorf("its own clock: NowFrom = %d, want the clock's %d", got, clk.Now())
	}
}
