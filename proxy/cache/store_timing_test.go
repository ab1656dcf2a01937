// BenchmarkStores measures the store in use (otter: objects kept by
// reference, per-object expiry, W-TinyLFU eviction by weight) against
// bigcache doing the same job under the same byte bound. bigcache keeps
// []byte in FIFO byte queues, so it must serialise an Object on every Set
// and copy (bigcache's copy on read) and decode it on every Get: the
// allocation and copy per hit that disqualify it, and a FIFO per shard
// that loses hit ratio under a skewed churn. bigcache is kept here only,
// as a yardstick, so the production build does not depend on it.
package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/allegro/bigcache/v3"
)

// bigcacheStore is Store on bigcache, keyed by the 8 bytes of the hash.
type bigcacheStore struct {
	c        *bigcache.BigCache
	rejected atomic.Int64 // sets bigcache refused: the entry exceeds a shard
	bufs     sync.Pool    // *[]byte serialisation buffers
}

// identityHasher hands the hash the caller computed to bigcache as is.
type identityHasher struct{}

func (identityHasher) Sum64(key string) uint64 { return binary.LittleEndian.Uint64([]byte(key)) }

func newBigcacheStore(maxBytes int64, typicalEntry int) (*bigcacheStore, error) {
	c, err := bigcache.New(context.Background(), bigcache.Config{
		Shards:           1024,
		LifeWindow:       24 * time.Hour, // one global TTL; objects carry their own times
		MaxEntrySize:     typicalEntry,   // sizes the initial queues only
		HardMaxCacheSize: int(max(maxBytes>>20, 1)),
		Hasher:           identityHasher{},
	})
	if err != nil {
		return nil, fmt.Errorf("cache: new bigcache store: %w", err)
	}
	return &bigcacheStore{c: c}, nil
}

func bigcacheKey(h uint64) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h)
	return string(b[:])
}

func (s *bigcacheStore) Get(h uint64) (*Object, bool) {
	b, err := s.c.Get(bigcacheKey(h))
	if err != nil {
		return nil, false
	}
	o, err := decodeObject(b)
	if err != nil {
		return nil, false
	}
	return o, true
}

func (s *bigcacheStore) Set(h uint64, o *Object) {
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	*bp = appendObject((*bp)[:0], o)
	if err := s.c.Set(bigcacheKey(h), *bp); err != nil {
		s.rejected.Add(1)
	}
	s.bufs.Put(bp)
}

func (s *bigcacheStore) Delete(h uint64) {
	// ErrEntryNotFound is the only error, and an absent key is deleted.
	_ = s.c.Delete(bigcacheKey(h))
}

// The encoding is length-prefixed: uvarints for lengths and counts,
// varints for times, and len+1 for byte slices so that nil survives.

func appendBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

func appendFields(b []byte, fs []Field) []byte {
	b = binary.AppendUvarint(b, uint64(len(fs)))
	for _, f := range fs {
		b = appendBytes(b, f.Name)
		b = appendBytes(b, f.Value)
	}
	return b
}

func appendEntry(b []byte, e *Entry) []byte {
	b = appendString(b, e.Variant)
	b = binary.AppendVarint(b, int64(e.Status))
	b = appendFields(b, e.Header)
	b = appendFields(b, e.Internal)
	for _, v := range [...][]byte{e.ETag, e.ETagWeak, e.LastModified, e.ContentType, e.Body, e.Gzip, e.Brotli} {
		b = appendBytes(b, v)
	}
	b = appendStrings(b, e.Tags)
	for _, t := range [...]int64{e.Stored, e.InitialAge, e.FreshUntil, e.StaleUntil, e.ErrorUntil} {
		b = binary.AppendVarint(b, t)
	}
	return b
}

func appendObject(b []byte, o *Object) []byte {
	b = appendString(b, o.Key)
	b = appendStrings(b, o.Vary.Headers)
	b = appendStrings(b, o.Vary.Cookies)
	b = binary.AppendVarint(b, o.PassUntil)
	b = binary.AppendUvarint(b, uint64(len(o.Variants)))
	for _, e := range o.Variants {
		b = appendEntry(b, e)
	}
	return b
}

var errCorrupt = errors.New("cache: corrupt bigcache entry")

// decoder reads what appendObject wrote. Byte slices and strings alias b,
// which bigcache copied out for this Get alone: the one copy per hit is
// bigcache's, the decoder adds none.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) take(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.err = errCorrupt
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	return d.take(n - 1)
}

func (d *decoder) string() string {
	v := d.take(d.uvarint())
	return unsafe.String(unsafe.SliceData(v), len(v))
}

func (d *decoder) strings() []string {
	n := d.uvarint()
	if n == 0 || n > uint64(len(d.b)) {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.string()
	}
	return ss
}

func (d *decoder) fields() []Field {
	n := d.uvarint()
	if n == 0 || n > uint64(len(d.b)) {
		return nil
	}
	fs := make([]Field, n)
	for i := range fs {
		fs[i] = Field{Name: d.bytes(), Value: d.bytes()}
	}
	return fs
}

func (d *decoder) entry() *Entry {
	e := &Entry{Variant: d.string(), Status: int(d.varint()), Header: d.fields(), Internal: d.fields()}
	for _, v := range [...]*[]byte{&e.ETag, &e.ETagWeak, &e.LastModified, &e.ContentType, &e.Body, &e.Gzip, &e.Brotli} {
		*v = d.bytes()
	}
	e.Tags = d.strings()
	for _, t := range [...]*int64{&e.Stored, &e.InitialAge, &e.FreshUntil, &e.StaleUntil, &e.ErrorUntil} {
		*t = d.varint()
	}
	return e
}

func decodeObject(b []byte) (*Object, error) {
	d := &decoder{b: b}
	o := &Object{Key: d.string()}
	o.Vary = VarySpec{Headers: d.strings(), Cookies: d.strings()}
	o.PassUntil = d.varint()
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		o.Variants = make([]*Entry, n)
		for i := range o.Variants {
			o.Variants[i] = d.entry()
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCorrupt
	}
	o.account()
	return o, nil
}

var _ Store = (*bigcacheStore)(nil)

// benchBody backs every benchmark body; entries share it, as pages of a
// real site would each own theirs, so only the stores' own copies cost RAM.
var benchBody = make([]byte, 64<<10)

// benchHeader is the ~10 pre-serialised fields of a typical page.
var benchHeader = []Field{
	{Name: []byte("Cache-Control"), Value: []byte("public, max-age=600, stale-while-revalidate=60")},
	{Name: []byte("Vary"), Value: []byte("Accept-Encoding")},
	{Name: []byte("Link"), Value: []byte(`<https://example.com/wp-json/>; rel="https://api.w.org/"`)},
	{Name: []byte("X-Powered-By"), Value: []byte("PHP/8.3.4")},
	{Name: []byte("Content-Language"), Value: []byte("en-GB")},
	{Name: []byte("X-Frame-Options"), Value: []byte("SAMEORIGIN")},
	{Name: []byte("X-Content-Type-Options"), Value: []byte("nosniff")},
	{Name: []byte("Referrer-Policy"), Value: []byte("strict-origin-when-cross-origin")},
	{Name: []byte("Strict-Transport-Security"), Value: []byte("max-age=31536000; includeSubDomains")},
	{Name: []byte("Permissions-Policy"), Value: []byte("interest-cohort=()")},
}

func benchEntry(bodyLen int, now int64) *Entry {
	return &Entry{
		Status:       200,
		Header:       benchHeader,
		ETag:         []byte(`"5f2a-1c8e3b"`),
		ETagWeak:     []byte(`W/"5f2a-1c8e3b"`),
		LastModified: []byte("Tue, 02 Jan 2024 15:04:05 GMT"),
		ContentType:  []byte("text/html; charset=UTF-8"),
		Body:         benchBody[:bodyLen],
		Tags:         []string{"post-1", "home", "author-3"},
		Stored:       now,
		FreshUntil:   now + int64(time.Hour),
		StaleUntil:   now + int64(2*time.Hour),
		ErrorUntil:   now + int64(24*time.Hour),
	}
}

// spreadHash stands in for Cache.Hash of key i. Its low 10 bits are a
// permutation of i mod 1024, so 1024 keys fill bigcache's shards evenly.
func spreadHash(i int) uint64 { return uint64(i+1) * 0x9E3779B97F4A7C15 }

type benchStore struct {
	Store
	rejected func() int64
	close    func()
}

type storeMaker struct {
	name string
	new  func(maxBytes int64, typicalEntry int) (benchStore, error)
}

var storeMakers = []storeMaker{
	{name: "otter", new: func(maxBytes int64, _ int) (benchStore, error) {
		s, err := newOtterStore(maxBytes, wallClock, false)
		if err != nil {
			return benchStore{}, err
		}
		return benchStore{Store: s, rejected: func() int64 { return 0 }, close: func() { s.c.StopAllGoroutines() }}, nil
	}},
	{name: "bigcache", new: func(maxBytes int64, typicalEntry int) (benchStore, error) {
		s, err := newBigcacheStore(maxBytes, typicalEntry)
		if err != nil {
			return benchStore{}, err
		}
		return benchStore{Store: s, rejected: s.rejected.Load, close: func() { _ = s.c.Close() }}, nil // Close never fails
	}},
}

// BenchmarkStores: hit is a parallel read of 1024 resident 30 KB pages;
// churn replays a Zipf(1.1) stream over 20,000 pages of 4-64 KB with room
// for a quarter of their bytes, inserting on every miss.
func BenchmarkStores(b *testing.B) {
	for _, m := range storeMakers {
		b.Run("hit/"+m.name, func(b *testing.B) { benchHit(b, m) })
	}
	for _, m := range storeMakers {
		b.Run("churn/"+m.name, func(b *testing.B) { benchChurn(b, m) })
	}
}

var benchSink atomic.Int64

func benchHit(b *testing.B, m storeMaker) {
	const (
		keys    = 1024
		bodyLen = 30 << 10
	)
	now := wallClock()
	proto := benchEntry(bodyLen, now)
	s, err := m.new(256<<20, proto.Size())
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	hs := make([]uint64, keys)
	for i := range hs {
		hs[i] = spreadHash(i)
		s.Set(hs[i], (&Object{Key: fmt.Sprint("/post/", i)}).with(VarySpec{}, benchEntry(bodyLen, now)))
	}
	for i, h := range hs {
		if _, ok := s.Get(h); !ok {
			b.Fatalf("key %d not resident after Set (rejected %d)", i, s.rejected())
		}
	}

	var misses atomic.Int64
	var workers atomic.Uint64
	b.ReportAllocs()
	b.SetBytes(bodyLen)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := workers.Add(1) * 331
		n := 0
		for pb.Next() {
			i++
			var e *Entry
			if o, ok := s.Get(hs[i%keys]); ok {
				e = o.Variant(nil)
			}
			if e == nil {
				misses.Add(1)
				continue
			}
			n += len(e.Body)
		}
		benchSink.Add(int64(n))
	})
	if n := misses.Load(); n > 0 {
		b.Fatalf("%d misses reading resident keys", n)
	}
}

// churnSet is the churn workload, built once for all stores.
type churnSet struct {
	objs     []*Object
	hashes   []uint64
	stream   []int32 // key indexes, Zipf(1.1) over ranks shuffled to keys
	capacity int64   // a quarter of the working set's charged bytes
	typical  int
}

const (
	churnKeys   = 20_000
	churnStream = 1 << 20
	churnWarm   = 1 << 18 // requests replayed before measuring
)

var churnWorkload = sync.OnceValue(func() *churnSet {
	rng := rand.New(rand.NewPCG(1, 2))
	now := wallClock()
	w := &churnSet{objs: make([]*Object, churnKeys), hashes: make([]uint64, churnKeys)}
	var total int64
	for k := range w.objs {
		size := 4<<10 + rng.IntN(60<<10+1)
		w.objs[k] = (&Object{Key: fmt.Sprint("/p/", k)}).with(VarySpec{}, benchEntry(size, now))
		w.hashes[k] = spreadHash(k)
		total += int64(w.objs[k].size)
	}
	w.capacity = total / 4
	w.typical = int(total / churnKeys)
	perm := rng.Perm(churnKeys)
	zipf := rand.NewZipf(rng, 1.1, 1, churnKeys-1)
	w.stream = make([]int32, churnStream)
	for i := range w.stream {
		w.stream[i] = int32(perm[zipf.Uint64()])
	}
	return w
})

func benchChurn(b *testing.B, m storeMaker) {
	w := churnWorkload()
	s, err := m.new(w.capacity, w.typical)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	request := func(i int) bool {
		k := w.stream[i%churnStream]
		if o, ok := s.Get(w.hashes[k]); ok && o.Key == w.objs[k].Key {
			return true
		}
		s.Set(w.hashes[k], w.objs[k])
		return false
	}
	for i := range churnWarm {
		request(i)
	}
	warmRejected := s.rejected()

	b.ReportAllocs()
	var hits, reqs int
	for b.Loop() {
		if request(churnWarm + reqs) {
			hits++
		}
		reqs++
	}
	b.ReportMetric(float64(hits)/float64(reqs), "hit-ratio")
	b.ReportMetric(float64(s.rejected()-warmRejected), "rejected")
}

// BenchmarkInsert is Cache.Insert of a 30 KB page replacing the variant
// of one of 4096 resident keys.
func BenchmarkInsert(b *testing.B) {
	const keys = 4096
	c, err := New(Config{Size: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	e := benchEntry(30<<10, wallClock())
	ks := make([]string, keys)
	hs := make([]uint64, keys)
	for i := range ks {
		ks[i] = fmt.Sprint("/post/", i)
		hs[i] = c.Hash([]byte(ks[i]))
		c.Insert(hs[i], ks[i], aeVary, e)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Insert(hs[i%keys], ks[i%keys], aeVary, e)
		i++
	}
}

// TestBigcacheStoreRoundTrip checks the benchmark's bigcache store gives
// back what was stored, and counts what it refuses.
func TestBigcacheStoreRoundTrip(t *testing.T) {
	now := wallClock()
	full := benchEntry(30<<10, now)
	full.Variant, full.InitialAge = "br", 42
	full.Internal = []Field{{Name: []byte("X-LiteSpeed-Tag"), Value: []byte("post-1")}}
	full.Gzip, full.Brotli = benchBody[:100], []byte{}
	tests := []struct {
		name         string
		obj          *Object
		wantRejected int64
	}{
		{name: "variants", obj: (&Object{Key: "/a"}).
			with(VarySpec{Headers: []string{"accept-encoding"}, Cookies: []string{"lang"}}, benchEntry(10, now)).
			with(VarySpec{Headers: []string{"accept-encoding"}, Cookies: []string{"lang"}}, full)},
		{name: "pass", obj: &Object{Key: "/p", PassUntil: now}},
		{name: "larger than a shard", obj: (&Object{Key: "/big"}).with(VarySpec{}, &Entry{Body: make([]byte, 2<<20)}), wantRejected: 1},
	}
	s, err := newBigcacheStore(64<<20, 1024) // 64 KB shards
	if err != nil {
		t.Fatal(err)
	}
	defer s.c.Close()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := spreadHash(i)
			rejected := s.rejected.Load()
			tt.obj.account()
			s.Set(h, tt.obj)
			if got := s.rejected.Load() - rejected; got != tt.wantRejected {
				t.Fatalf("rejected = %d, want %d", got, tt.wantRejected)
			}
			got, ok := s.Get(h)
			if tt.wantRejected > 0 {
				if ok {
					t.Fatal("Get of a rejected object hits")
				}
				return
			}
			if !ok {
				t.Fatal("Get misses")
			}
			want := *tt.obj
			want.uses = nil // use counts live in memory only
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, &want)
			}
			s.Delete(h)
			if _, ok := s.Get(h); ok {
				t.Error("Get after Delete hits")
			}
		})
	}
}

// with is o's successor holding e, as Insert makes it.
func (o *Object) with(vary VarySpec, e *Entry) *Object {
	n, _ := o.withVariant(vary, e, 32, e.Stored, 0)
	return n
}
