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
