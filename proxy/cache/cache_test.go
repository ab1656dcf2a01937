package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// sharedBody backs every test body: entries are charged by length, so the
// tests can hold far more "bytes" than they allocate.
var sharedBody = make([]byte, 1<<20)

var aeVary = VarySpec{Headers: []string{"accept-encoding"}}

func newTestCache(t testing.TB, cfg Config) *Cache {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { _ = c.Close() }) // Close never fails
	return c
}

// testEntry is a variant with a body of bodyLen bytes that can be served
// (fresh, stale or on error) for life from now.
func testEntry(variant string, bodyLen int, life time.Duration) *Entry {
	e := entryAt(wallClock(), life)
	e.Variant, e.Body = variant, sharedBody[:bodyLen]
	return e
}

// entryAt is a variant stored at now that can be served for life.
func entryAt(now int64, life time.Duration) *Entry {
	return &Entry{
		Status:      200,
		Header:      []Field{{Name: []byte("Cache-Control"), Value: []byte("max-age=60")}},
		ContentType: []byte("text/html"),
		Stored:      now,
		FreshUntil:  now + int64(life),
		StaleUntil:  now + int64(life),
		ErrorUntil:  now + int64(life),
	}
}

// insert stores e under key and returns the key's hash.
func insert(c *Cache, key string, vary VarySpec, e *Entry) uint64 {
	h := c.Hash([]byte(key))
	c.Insert(h, key, vary, e)
	return h
}

// variants lists the Variant of every entry of o, in stored order.
func variants(o *Object) []string {
	var vs []string
	for _, e := range o.Variants {
		vs = append(vs, e.Variant)
	}
	return vs
}

func TestNewRejectsNonPositiveSize(t *testing.T) {
	for _, size := range []int64{0, -1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			if _, err := New(Config{Size: size}); !errors.Is(err, ErrBadSize) {
				t.Fatalf("New(Size: %d) = %v, want ErrBadSize", size, err)
			}
		})
	}
}

func TestLookupMissAndHit(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	e := testEntry("", 100, time.Hour)
	h := insert(c, "/a", VarySpec{}, e)

	tests := []struct {
		name string
		h    uint64
		key  string
		want *Entry
	}{
		{name: "stored key hits", h: h, key: "/a", want: e},
		{name: "absent key misses", h: c.Hash([]byte("/b")), key: "/b"},
		{name: "right hash wrong key misses", h: h, key: "/b"},
		{name: "right key wrong hash misses", h: h + 1, key: "/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := c.Lookup(tt.h, []byte(tt.key))
			if tt.want == nil {
				if o != nil {
					t.Fatalf("Lookup(%q) = %+v, want nil", tt.key, o)
				}
				return
			}
			if o == nil {
				t.Fatalf("Lookup(%q) = nil, want an object", tt.key)
			}
			if o.Key != tt.key {
				t.Errorf("Key = %q, want %q", o.Key, tt.key)
			}
			if got := o.Variant(nil); got != tt.want {
				t.Errorf("Variant(nil) = %p, want %p", got, tt.want)
			}
		})
	}
}

// TestLookupConfirmsKeyOnHashCollision stores an object for another key
// under the hash of /a, as a 64-bit collision would.
func TestLookupConfirmsKeyOnHashCollision(t *testing.T) {
	tests := []struct {
		name string
		// act runs against a cache whose hash h of /a holds /other's object.
		act func(t *testing.T, c *Cache, h uint64, other *Object)
	}{
		{name: "lookup of the colliding key misses", act: func(t *testing.T, c *Cache, h uint64, other *Object) {
			if o := c.Lookup(h, []byte("/a")); o != nil {
				t.Fatalf("Lookup(/a) = object of %q, want nil", o.Key)
			}
			if o := c.Lookup(h, []byte("/other")); o != other {
				t.Fatalf("Lookup(/other) = %p, want the stored object %p", o, other)
			}
		}},
		{name: "remove of the colliding key keeps the other", act: func(t *testing.T, c *Cache, h uint64, other *Object) {
			if c.Remove(h, []byte("/a")) {
				t.Fatal("Remove(/a) = true, want false")
			}
			if c.Lookup(h, []byte("/other")) != other {
				t.Fatal("Remove(/a) dropped /other")
			}
		}},
		{name: "insert of the colliding key replaces the other", act: func(t *testing.T, c *Cache, h uint64, _ *Object) {
			c.Insert(h, "/a", aeVary, testEntry("gzip", 10, time.Hour))
			o := c.Lookup(h, []byte("/a"))
			if o == nil {
				t.Fatal("Lookup(/a) after Insert = nil")
			}
			if got := variants(o); len(got) != 1 || got[0] != "gzip" {
				t.Errorf("variants = %q, want only [gzip]: /other's must not be inherited", got)
			}
			if c.Lookup(h, []byte("/other")) != nil {
				t.Error("Lookup(/other) still hits after /a took its hash")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: 1 << 20})
			h := c.Hash([]byte("/a"))
			other := &Object{Key: "/other", Vary: aeVary, Variants: []*Entry{testEntry("br", 10, time.Hour)}}
			other.account()
			c.store.Set(h, other)
			tt.act(t, c, h, other)
		})
	}
}

func TestInsertKeepsOtherVariantsOfSameVary(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	gz := testEntry("gzip", 10, time.Hour)
	br := testEntry("br", 10, time.Hour)
	h := insert(c, "/a", aeVary, gz)
	insert(c, "/a", aeVary, br)
	gz2 := testEntry("gzip", 20, time.Hour)
	insert(c, "/a", VarySpec{Headers: []string{"accept-encoding"}}, gz2) // equal spec, other slice

	o := c.Lookup(h, []byte("/a"))
	if o == nil {
		t.Fatal("Lookup = nil")
	}
	tests := []struct {
		variant string
		want    *Entry
	}{
		{variant: "gzip", want: gz2}, // replaced, not duplicated
		{variant: "br", want: br},
		{variant: "identity", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			if got := o.Variant([]byte(tt.variant)); got != tt.want {
				t.Errorf("Variant(%q) = %p, want %p", tt.variant, got, tt.want)
			}
		})
	}
	if len(o.Variants) != 2 {
		t.Errorf("variants = %q, want 2 (one per variant)", variants(o))
	}
}

func TestInsertWithChangedVaryDropsOldVariants(t *testing.T) {
	tests := []struct {
		name     string
		old, new VarySpec
		wantKept bool
	}{
		{name: "same spec keeps", old: aeVary, new: aeVary, wantKept: true},
		{name: "other header drops", old: aeVary, new: VarySpec{Headers: []string{"accept-language"}}},
		{name: "added cookie drops", old: aeVary, new: VarySpec{Headers: aeVary.Headers, Cookies: []string{"lang"}}},
		{name: "to no vary drops", old: aeVary, new: VarySpec{}},
		{name: "from no vary drops", old: VarySpec{}, new: aeVary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: 1 << 20})
			h := insert(c, "/a", tt.old, testEntry("v1", 10, time.Hour))
			insert(c, "/a", tt.new, testEntry("v2", 10, time.Hour))
			o := c.Lookup(h, []byte("/a"))
			if o == nil {
				t.Fatal("Lookup = nil")
			}
			if !o.Vary.Equal(tt.new) {
				t.Errorf("Vary = %+v, want %+v", o.Vary, tt.new)
			}
			if o.Variant([]byte("v2")) == nil {
				t.Error("new variant v2 missing")
			}
			if kept := o.Variant([]byte("v1")) != nil; kept != tt.wantKept {
				t.Errorf("old variant v1 kept = %v, want %v", kept, tt.wantKept)
			}
		})
	}
}

func TestInsertBoundsVariants(t *testing.T) {
	tests := []struct {
		name        string
		maxVariants int
		inserted    int
		wantKept    int
	}{
		{name: "zero means 32", maxVariants: 0, inserted: 40, wantKept: 32},
		{name: "one keeps the first, used no less", maxVariants: 1, inserted: 3, wantKept: 1},
		{name: "two keep the first two", maxVariants: 2, inserted: 5, wantKept: 2},
		{name: "under the bound keeps all", maxVariants: 8, inserted: 5, wantKept: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: 1 << 20, MaxVariants: tt.maxVariants})
			var h uint64
			for i := range tt.inserted {
				h = insert(c, "/a", aeVary, testEntry(fmt.Sprint("v", i), 10, time.Hour))
			}
			o := c.Lookup(h, []byte("/a"))
			if o == nil {
				t.Fatal("Lookup = nil")
			}
			if len(o.Variants) != tt.wantKept {
				t.Fatalf("kept %d variants %q, want %d", len(o.Variants), variants(o), tt.wantKept)
			}
			for i := range tt.wantKept { // each asked for once: a newcomer is not used more
				if o.Variant(fmt.Append(nil, "v", i)) == nil {
					t.Errorf("variant v%d dropped for one used no more; kept %q", i, variants(o))
				}
			}
		})
	}
}

func TestMarkPassReplacesVariants(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	h := insert(c, "/a", aeVary, testEntry("gzip", 10, time.Hour))
	insert(c, "/a", aeVary, testEntry("br", 10, time.Hour))
	until := wallClock() + int64(time.Hour)
	c.MarkPass(h, "/a", until)

	o := c.Lookup(h, []byte("/a"))
	if o == nil {
		t.Fatal("Lookup after MarkPass = nil, want the pass object")
	}
	if o.PassUntil != until {
		t.Errorf("PassUntil = %d, want %d", o.PassUntil, until)
	}
	if len(o.Variants) != 0 {
		t.Errorf("variants after MarkPass = %q, want none", variants(o))
	}
}

func TestInsertAfterPassReplacesPassObject(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	h := c.Hash([]byte("/a"))
	c.MarkPass(h, "/a", wallClock()+int64(time.Hour))
	e := testEntry("gzip", 10, time.Hour)
	c.Insert(h, "/a", aeVary, e)

	o := c.Lookup(h, []byte("/a"))
	if o == nil {
		t.Fatal("Lookup = nil")
	}
	if o.PassUntil != 0 {
		t.Errorf("PassUntil = %d, want 0: a stored response ends the pass", o.PassUntil)
	}
	if got := variants(o); len(got) != 1 || o.Variant([]byte("gzip")) != e {
		t.Errorf("variants = %q, want only the inserted gzip", got)
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name    string
		stored  bool
		wantHad bool
	}{
		{name: "stored key", stored: true, wantHad: true},
		{name: "absent key", stored: false, wantHad: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: 1 << 20})
			h := c.Hash([]byte("/a"))
			if tt.stored {
				c.Insert(h, "/a", aeVary, testEntry("gzip", 10, time.Hour))
				c.Insert(h, "/a", aeVary, testEntry("br", 10, time.Hour))
			}
			keep := insert(c, "/b", VarySpec{}, testEntry("", 10, time.Hour))
			if got := c.Remove(h, []byte("/a")); got != tt.wantHad {
				t.Errorf("Remove = %v, want %v", got, tt.wantHad)
			}
			if c.Lookup(h, []byte("/a")) != nil {
				t.Error("Lookup after Remove hits")
			}
			if c.Remove(h, []byte("/a")) {
				t.Error("second Remove = true, want false")
			}
			if c.Lookup(keep, []byte("/b")) == nil {
				t.Error("Remove(/a) dropped /b")
			}
		})
	}
}

func TestObjectExpiresWhenNoVariantIsServable(t *testing.T) {
	const short = 50 * time.Millisecond
	variant := func(clk *fakeClock, v string, life time.Duration) *Entry {
		e := clk.entry(life)
		e.Variant, e.Body = v, sharedBody[:10]
		return e
	}
	tests := []struct {
		name        string
		store       func(c *Cache, clk *fakeClock, h uint64)
		wantExpired bool
	}{
		{name: "single short entry", wantExpired: true, store: func(c *Cache, clk *fakeClock, h uint64) {
			c.Insert(h, "/a", VarySpec{}, variant(clk, "", short))
		}},
		{name: "fresh short but error window long", wantExpired: false, store: func(c *Cache, clk *fakeClock, h uint64) {
			e := variant(clk, "", short)
			e.ErrorUntil = clk.Now() + int64(time.Hour)
			c.Insert(h, "/a", VarySpec{}, e)
		}},
		{name: "one long variant keeps the object", wantExpired: false, store: func(c *Cache, clk *fakeClock, h uint64) {
			c.Insert(h, "/a", aeVary, variant(clk, "gzip", time.Hour))
			c.Insert(h, "/a", aeVary, variant(clk, "br", short))
		}},
		{name: "shorter replacement shortens the deadline", wantExpired: true, store: func(c *Cache, clk *fakeClock, h uint64) {
			c.Insert(h, "/a", VarySpec{}, variant(clk, "", time.Hour))
			c.Insert(h, "/a", VarySpec{}, variant(clk, "", short))
		}},
		{name: "pass ends", wantExpired: true, store: func(c *Cache, clk *fakeClock, h uint64) {
			c.MarkPass(h, "/a", clk.Now()+int64(short))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
			h := c.Hash([]byte("/a"))
			tt.store(c, clk, h)
			if c.Lookup(h, []byte("/a")) == nil {
				t.Fatal("Lookup right after storing = nil")
			}
			clk.Advance(4 * short)
			gone := c.Lookup(h, []byte("/a")) == nil
			if tt.wantExpired && !gone {
				t.Fatal("object still present after every variant expired")
			}
			if !tt.wantExpired && gone {
				t.Fatal("object expired while a variant was still servable")
			}
		})
	}
}

// TestInsertOfExpiredEntryDoesNotStay: an entry that can no longer be
// served when it is inserted must not be kept until size eviction.
func TestInsertOfExpiredEntryDoesNotStay(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	e := testEntry("", 10, -time.Second)
	h := insert(c, "/a", VarySpec{}, e)
	if !testbed.Poll(time.Second, func() bool { return c.Lookup(h, []byte("/a")) == nil }) {
		t.Fatal("already expired entry is still stored")
	}
}

func TestEntryTimes(t *testing.T) {
	const sec = int64(time.Second)
	base := int64(1_700_000_000) * sec
	e := &Entry{
		Stored:     base,
		InitialAge: 5,
		FreshUntil: base + 10*sec,
		StaleUntil: base + 20*sec,
		ErrorUntil: base + 30*sec,
	}
	tests := []struct {
		name                         string
		now                          int64
		fresh, servable, servableErr bool
		age                          int64
	}{
		{name: "just stored", now: base, fresh: true, servable: true, servableErr: true, age: 5},
		{name: "partial seconds round down", now: base + 2*sec + sec/2, fresh: true, servable: true, servableErr: true, age: 7},
		{name: "at fresh-until is stale", now: base + 10*sec, fresh: false, servable: true, servableErr: true, age: 15},
		{name: "at stale-until only on error", now: base + 20*sec, fresh: false, servable: false, servableErr: true, age: 25},
		{name: "at error-until not servable", now: base + 30*sec, fresh: false, servable: false, servableErr: false, age: 35},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.Fresh(tt.now); got != tt.fresh {
				t.Errorf("Fresh = %v, want %v", got, tt.fresh)
			}
			if got := e.Servable(tt.now); got != tt.servable {
				t.Errorf("Servable = %v, want %v", got, tt.servable)
			}
			if got := e.ServableOnError(tt.now); got != tt.servableErr {
				t.Errorf("ServableOnError = %v, want %v", got, tt.servableErr)
			}
			if got := e.Age(tt.now); got != tt.age {
				t.Errorf("Age = %d, want %d", got, tt.age)
			}
		})
	}
}

func TestEntrySizeChargesEveryField(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want int
	}{
		{name: "empty", e: Entry{}, want: entryOverhead},
		{name: "bodies and validators", e: Entry{
			Variant: "gzip", Body: make([]byte, 100), Gzip: make([]byte, 40), Brotli: make([]byte, 30),
			ETag: []byte(`"x"`), ETagWeak: []byte(`W/"x"`), LastModified: []byte("d"), ContentType: []byte("t/h"),
		}, want: entryOverhead + 4 + 100 + 40 + 30 + 3 + 5 + 1 + 3},
		{name: "fields and tags", e: Entry{
			Header:   []Field{{Name: []byte("A"), Value: []byte("bc")}},
			Internal: []Field{{Name: []byte("X-T"), Value: []byte("1")}},
			Tags:     []string{"post-1", "home"},
		}, want: entryOverhead + (3 + fieldOverhead) + (4 + fieldOverhead) + (6 + 16) + (4 + 16)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.Size(); got != tt.want {
				t.Errorf("Size = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestBytesChargesObjectAndEntries(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	gz := testEntry("gzip", 1000, time.Hour)
	br := testEntry("br", 500, time.Hour)
	insert(c, "/a", aeVary, gz)
	insert(c, "/a", aeVary, br)
	c.store.c.CleanUp()
	want := uint64(objectOverhead + len("/a") + gz.Size() + br.Size())
	if got := c.Bytes(); got != want {
		t.Errorf("Bytes = %d, want %d", got, want)
	}
	if got := c.Len(); got != 1 {
		t.Errorf("Len = %d, want 1 (one object per key)", got)
	}
}

func TestVarySpec(t *testing.T) {
	tests := []struct {
		name      string
		a, b      VarySpec
		equal     bool
		emptyA    bool
		emptyBoth bool
	}{
		{name: "nil and empty", a: VarySpec{}, b: VarySpec{Headers: []string{}}, equal: true, emptyA: true},
		{name: "same headers", a: aeVary, b: VarySpec{Headers: []string{"accept-encoding"}}, equal: true},
		{name: "order matters", a: VarySpec{Headers: []string{"a", "b"}}, b: VarySpec{Headers: []string{"b", "a"}}},
		{name: "cookies count", a: VarySpec{Cookies: []string{"lang"}}, b: VarySpec{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Equal(tt.b); got != tt.equal {
				t.Errorf("Equal = %v, want %v", got, tt.equal)
			}
			if got := tt.b.Equal(tt.a); got != tt.equal {
				t.Errorf("Equal reversed = %v, want %v", got, tt.equal)
			}
			if got := tt.a.Empty(); got != tt.emptyA {
				t.Errorf("Empty = %v, want %v", got, tt.emptyA)
			}
		})
	}
}

func TestEvictionKeepsBytesUnderSize(t *testing.T) {
	const size = 1 << 20
	tests := []struct {
		name    string
		objects int
		body    int
	}{
		{name: "30KB bodies, 15x the size", objects: 500, body: 30 << 10},
		{name: "small bodies, 10x the size", objects: 5000, body: 2 << 10},
		{name: "bodies over half the size", objects: 20, body: 600 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: size})
			for i := range tt.objects {
				insert(c, fmt.Sprint("/p/", i), VarySpec{}, testEntry("", tt.body, time.Hour))
			}
			c.store.c.CleanUp()
			if got := c.Bytes(); got > size {
				t.Errorf("Bytes = %d after inserting %d x %d B, want <= %d", got, tt.objects, tt.body, size)
			}
			if c.Len() == 0 {
				t.Error("Len = 0: eviction dropped everything")
			}
		})
	}
}

func TestResize(t *testing.T) {
	const size = 4 << 20
	body := 30 << 10
	tests := []struct {
		name    string
		newSize int64
		insert  int // objects inserted after the resize
		check   func(t *testing.T, c *Cache)
		wantErr error
	}{
		{name: "shrink evicts down to the new size", newSize: 1 << 20, check: func(t *testing.T, c *Cache) {
			if got := c.Bytes(); got > 1<<20 {
				t.Errorf("Bytes = %d after shrinking, want <= %d", got, 1<<20)
			}
		}},
		{name: "grow admits more than the old size", newSize: 16 << 20, insert: 300, check: func(t *testing.T, c *Cache) {
			if got := c.Bytes(); got <= size {
				t.Errorf("Bytes = %d after growing to 16MB, want > old size %d", got, size)
			}
			if got := c.Bytes(); got > 16<<20 {
				t.Errorf("Bytes = %d, want <= 16MB", got)
			}
		}},
		{name: "zero is rejected", newSize: 0, wantErr: ErrBadSize},
		{name: "negative is rejected", newSize: -1, wantErr: ErrBadSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, Config{Size: size})
			for i := range 120 { // ~3.6MB, under the size
				insert(c, fmt.Sprint("/p/", i), VarySpec{}, testEntry("", body, time.Hour))
			}
			err := c.Resize(tt.newSize)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Resize(%d) = %v, want %v", tt.newSize, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			for i := range tt.insert {
				insert(c, fmt.Sprint("/q/", i), VarySpec{}, testEntry("", body, time.Hour))
			}
			c.store.c.CleanUp()
			tt.check(t, c)
		})
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	c, err := New(Config{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := c.Close(); err != nil {
			t.Fatalf("Close #%d = %v", i+1, err)
		}
	}
}

// TestConcurrentInsertLookupNeverAnswersWrong runs inserts, lookups,
// passes and removes of overlapping keys together (meant for -race): a
// hit may miss a variant another insert lost, but never return an entry
// of another key or variant.
func TestConcurrentInsertLookupNeverAnswersWrong(t *testing.T) {
	const (
		workers = 8
		ops     = 3000
		keys    = 64
	)
	vars := []string{"gzip", "br", "identity", "zstd"}
	c := newTestCache(t, Config{Size: 2 << 20, MaxVariants: 3})
	keyBytes := make([][]byte, keys)
	for i := range keyBytes {
		keyBytes[i] = fmt.Appendf(nil, "/post/%d", i)
	}
	// Each entry's body starts with its key index and variant index.
	entries := make([][]*Entry, keys)
	for k := range entries {
		for v, name := range vars {
			e := testEntry(name, 0, time.Hour)
			e.Body = []byte{byte(k), byte(v)}
			entries[k] = append(entries[k], e)
		}
	}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for range ops {
				k, v := rng.IntN(keys), rng.IntN(len(vars))
				key := keyBytes[k]
				h := c.Hash(key)
				switch op := rng.IntN(100); {
				case op < 60:
					o := c.Lookup(h, key)
					if o == nil {
						continue
					}
					if o.Key != string(key) {
						t.Errorf("Lookup(%s) returned object of %q", key, o.Key)
						return
					}
					e := o.Variant([]byte(vars[v]))
					if e != nil && (e.Body[0] != byte(k) || e.Body[1] != byte(v)) {
						t.Errorf("Lookup(%s).Variant(%s) returned entry of key %d variant %d", key, vars[v], e.Body[0], e.Body[1])
						return
					}
				case op < 90:
					// A new entry is inserted by one goroutine (Insert's
					// contract: it takes its tags and popularity then).
					e := *entries[k][v]
					c.Insert(h, string(key), aeVary, &e)
				case op < 95:
					c.MarkPass(h, string(key), wallClock()+int64(time.Minute))
				default:
					c.Remove(h, key)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			if err := c.Resize(int64(1+i%2) << 20); err != nil {
				t.Errorf("Resize: %v", err)
				return
			}
			_, _ = c.Len(), c.Bytes()
		}
	})
	wg.Wait()
}

// A URL at MaxVariants refuses a newcomer asked for no more than the
// variants it keeps, admits one asked for again in place of the least
// used (the oldest of equals), and counts both.
func TestVariantsPastTheCapAreDroppedAndCounted(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20, MaxVariants: 3})
	vary := VarySpec{Headers: []string{"accept-language"}}
	for i := range 5 {
		insert(c, "/a", vary, testEntry(fmt.Sprint("v", i), 10, time.Hour))
	}
	o := c.Lookup(c.Hash([]byte("/a")), []byte("/a"))
	if got := variants(o); !slices.Equal(got, []string{"v2", "v1", "v0"}) {
		t.Fatalf("variants %v, want the 3 first, newest first", got)
	}
	insert(c, "/a", vary, testEntry("v1", 10, time.Hour)) // replacing one is not a drop
	insert(c, "/a", vary, testEntry("v4", 10, time.Hour)) // asked for a second time
	o = c.Lookup(c.Hash([]byte("/a")), []byte("/a"))
	if got := variants(o); !slices.Equal(got, []string{"v4", "v1", "v2"}) {
		t.Fatalf("variants %v, want v4 in place of v0", got)
	}
	if n := c.VariantsDropped(); n != 3 {
		t.Fatalf("VariantsDropped = %d, want 3 (v3 and v4 refused, v0 dropped)", n)
	}
}
