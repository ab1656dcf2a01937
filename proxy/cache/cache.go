package cache

import (
	"errors"
	"hash/maphash"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
)

// Config sizes the cache.
type Config struct {
	// Size bounds the bytes held by stored entries, including an estimate
	// of their bookkeeping. Required.
	Size int64
	// MaxVariants bounds the variants kept per URL; 0 means 32.
	MaxVariants int
	// Clock is the time entries are stored, served and expired by, in
	// unix nanoseconds; nil means the wall clock. Tests pass a fake one
	// instead of sleeping for TTLs to run out.
	Clock func() int64
}

// ErrBadSize is returned for a non-positive size.
var ErrBadSize = errors.New("cache: size must be positive")

// Cache is the page store. It is safe for concurrent use.
type Cache struct {
	store       *otterStore
	seed        maphash.Seed
	maxVariants int
	clock       func() int64 // nil: the wall clock
	tags        tagIndex
	// allHard and allSoft are the times of the last purge of everything.
	allHard, allSoft atomic.Int64
	// gap is the last purge of everything that nobody could name (a
	// fan-out gap, gap.go); nil before any.
	gap             atomic.Pointer[gapMark]
	gapMu           sync.Mutex // serialises MarkGap
	variantsDropped atomic.Uint64
	// lower is the tier under the cache (lower.go); nil: none.
	lower Lower
	// dropped observes what purges remove at once (popularity.go).
	dropped atomic.Pointer[dropObserver]
}

// New returns an empty cache bounded by cfg.Size bytes.
func New(cfg Config) (*Cache, error) {
	if cfg.Size <= 0 {
		return nil, ErrBadSize
	}
	clock := cfg.Clock
	if clock == nil {
		clock = wallClock
	}
	s, err := newOtterStore(cfg.Size, clock, cfg.Clock != nil)
	if cfg.Clock == nil {
		clock = nil // Now reads the wall clock itself: no call through a func value per hit
	}
	if err != nil {
		return nil, err
	}
	mv := cfg.MaxVariants
	if mv <= 0 {
		mv = 32
	}
	return &Cache{store: s, seed: maphash.MakeSeed(), maxVariants: mv, clock: clock}, nil
}

// Hash returns the lookup hash of a primary key.
func (c *Cache) Hash(key []byte) uint64 { return maphash.Bytes(c.seed, key) }

// Lookup returns the object stored under key (whose hash is h), or nil.
// It does not allocate.
func (c *Cache) Lookup(h uint64, key []byte) *Object {
	o, ok := c.store.Get(h)
	if !ok || o.Key != string(key) {
		return nil
	}
	return o
}

// Insert stores e as the variant of key selected by vary, unless the key
// holds MaxVariants variants used more than e (admission.go). A new
// entry's tags are interned and its popularity given here, so the same new entry must not be
// inserted by two goroutines at once; a stored entry is never changed.
// Concurrent inserts of one key may lose a variant; that costs a later
// miss, never a wrong answer, because every entry carries its own variant.
func (c *Cache) Insert(h uint64, key string, vary VarySpec, e *Entry) {
	if c.lower == nil {
		c.insert(h, key, vary, e)
		return
	}
	seq := c.lower.Seq()
	if n := c.insert(h, key, vary, e); n != nil {
		c.lower.Stored(h, n, seq)
	}
}

// insert stores e as Insert does and returns the object now stored, or
// nil when e was refused.
func (c *Cache) insert(h uint64, key string, vary VarySpec, e *Entry) *Object {
	c.internTags(e)
	old, ok := c.store.Get(h)
	if !ok || old.Key != key || old.PassUntil > 0 {
		old = &Object{Key: key}
	}
	givePopularity(e, old)
	n, dropped := old.withVariant(vary, e, c.maxVariants, c.Now(), maphash.String(c.seed, e.Variant))
	if dropped > 0 {
		c.variantsDropped.Add(uint64(dropped))
	}
	if n != nil {
		c.store.Set(h, n)
	}
	return n
}

// internTags gives e its tags' states, which Status reads.
func (c *Cache) internTags(e *Entry) {
	if e.tags == nil && len(e.Tags) > 0 {
		e.tags = make([]*tagState, len(e.Tags))
		for i, t := range e.Tags {
			e.tags[i] = c.tags.intern(t)
		}
	}
}

// VariantsDropped counts the variants dropped or refused because a URL
// had MaxVariants already (a request header with endless values would
// otherwise grow one object without bound).
func (c *Cache) VariantsDropped() uint64 { return c.variantsDropped.Load() }

// MarkPass records that key answered uncacheably, dropping its variants;
// until the given unix-nano time, requests for it skip coalescing.
func (c *Cache) MarkPass(h uint64, key string, until int64) {
	// What RAM drops for answering uncacheably must not come back from
	// the lower tier.
	c.purgeAround(Purge{Exact: key, At: always}, func() {
		o := &Object{Key: key, PassUntil: until}
		o.account()
		c.store.Set(h, o)
	})
}

// Remove drops every variant of key. It reports whether there was one.
func (c *Cache) Remove(h uint64, key []byte) bool {
	removed := false
	// The lower tier may hold a key RAM no longer does. Check and delete
	// under the bucket lock, so an object stored under another key with
	// the same hash in between is never removed.
	c.purgeAround(Purge{Exact: string(key), At: always}, func() {
		c.store.c.ComputeIfPresent(h, func(o *Object) (*Object, otter.ComputeOp) {
			if o.Key != string(key) {
				return o, otter.CancelOp
			}
			removed = true
			return nil, otter.InvalidateOp
		})
	})
	return removed
}

// Resize changes the byte bound; otter evicts down to it at once.
func (c *Cache) Resize(size int64) error {
	if size <= 0 {
		return ErrBadSize
	}
	c.store.c.SetMaximum(uint64(size))
	return nil
}

// Size is the byte bound.
func (c *Cache) Size() uint64 { return c.store.c.GetMaximum() }

// Len is the approximate number of objects held.
func (c *Cache) Len() int { return c.store.c.EstimatedSize() }

// Bytes is the weighted size of what is held.
func (c *Cache) Bytes() uint64 { return c.store.c.WeightedSize() }

// Close stops the store's maintenance goroutines and closes the lower
// tier if it is an io.Closer. It is idempotent if the tier's Close is.
func (c *Cache) Close() error {
	c.store.c.StopAllGoroutines()
	if cl, ok := c.lower.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Now is the cache's clock, which entries are compared against, in unix
// nanoseconds.
func (c *Cache) Now() int64 {
	if c.clock == nil {
		return time.Now().UnixNano()
	}
	return c.clock()
}

// NowFrom is Now for a caller that read the wall clock at t (the
// request's start, microseconds before): t itself, unless t is zero or
// the cache runs on a clock of its own (Config.Clock, in tests).
func (c *Cache) NowFrom(t time.Time) int64 {
	if c.clock == nil && !t.IsZero() {
		return t.UnixNano()
	}
	return c.Now()
}

func wallClock() int64 { return time.Now().UnixNano() }

// MemoryLimit is the Go memory limit that keeps a process holding a full
// cache of size bytes near size in RSS: evicted entries are garbage, and
// without a limit the GC lets the heap grow to twice the live size. The
// headroom (15% + 32 MiB) keeps the collector from running constantly.
func MemoryLimit(size int64) int64 { return size + size*3/20 + 32<<20 }
