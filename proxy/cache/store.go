package cache

import (
	"fmt"
	"time"

	"github.com/maypok86/otter/v2"
)

// Store is what the cache needs of a concurrent, byte-bounded map. It is
// narrow so that other engines can be measured against the one in use
// (see BenchmarkStores).
type Store interface {
	Get(h uint64) (*Object, bool)
	Set(h uint64, o *Object)
	Delete(h uint64)
}

// otterStore keeps objects by reference (no copy per hit), expires each at
// its own time, and evicts by weight with W-TinyLFU.
type otterStore struct {
	c *otter.Cache[uint64, *Object]
}

// newOtterStore expires objects by clock; a fake clock (injected) also
// becomes otter's, without its periodic clean-up ticks.
func newOtterStore(maxBytes int64, clock func() int64, injected bool) (*otterStore, error) {
	opts := &otter.Options[uint64, *Object]{
		MaximumWeight: uint64(maxBytes),
		Weigher:       func(_ uint64, o *Object) uint32 { return uint32(min(o.size, 1<<31)) },
		// Only writes set an object's deadline: with the built-in writing
		// calculator otter's reads skip the calculator (and a clock read).
		ExpiryCalculator: otter.ExpiryWritingFunc(objectExpiry{clock}.untilExpiry),
		// Every value that leaves the store, for whatever cause, takes
		// its variants off their tallies, in the same atomic step.
		OnAtomicDeletion: func(e otter.DeletionEvent[uint64, *Object]) { e.Value.tally(-1) },
	}
	if injected {
		opts.Clock = otterClock(clock)
	}
	c, err := otter.New(opts)
	if err != nil {
		return nil, fmt.Errorf("cache: new otter store: %w", err)
	}
	return &otterStore{c: c}, nil
}

func (s *otterStore) Get(h uint64) (*Object, bool) { return s.c.GetIfPresent(h) }
func (s *otterStore) Set(h uint64, o *Object)      { o.tally(1); s.c.Set(h, o) }
func (s *otterStore) Delete(h uint64)              { s.c.Invalidate(h) }

// objectExpiry drops an object from memory once none of its variants can
// be served any more, fresh or stale.
type objectExpiry struct{ clock func() int64 }

// untilExpiry is at least 1ns: otter reads a non-positive duration as
// "keep the current deadline", which for a new key is never.
func (x objectExpiry) untilExpiry(e otter.Entry[uint64, *Object]) time.Duration {
	return max(time.Duration(e.Value.expiresAt-x.clock()), 1)
}

// otterClock is an injected clock as otter's: no ticks, so no periodic
// clean-up (expired objects still go on access and on eviction).
type otterClock func() int64

func (c otterClock) NowNano() int64                    { return c() }
func (otterClock) Tick(time.Duration) <-chan time.Time { return nil }

var (
	_ Store       = (*otterStore)(nil)
	_ otter.Clock = otterClock(nil)
)
