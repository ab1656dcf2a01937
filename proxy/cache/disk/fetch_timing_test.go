package disk

import (
	"fmt"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// BenchmarkFetch30K is a hit on a 30 KB page RAM does not hold: 400 pages
// over a 1 MiB RAM tier, asked in turn, so nearly every lookup reads the
// page's file (from the kernel's page cache), checks it and puts it back
// in RAM. disk/op is the share of lookups the disk answered.
func BenchmarkFetch30K(b *testing.B) {
	small, t, keys := pages30K(b)
	for i := range b.N {
		k := keys[i%len(keys)]
		o := small.Fetch(small.Hash(k), k)
		if o == nil || o.Variant(nil) == nil {
			b.Fatalf("%s missed", k)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(t.Snapshot().Hits)/float64(b.N), "disk/op")
}

// BenchmarkLend30K is what a hit from disk sent with sendfile costs the
// tier: the file kept open with its parsed head after its first lend
// (the body is left to the socket); nothing put in RAM.
func BenchmarkLend30K(b *testing.B) {
	small, _, keys := pages30K(b)
	for i := range b.N {
		k := keys[i%len(keys)]
		o := small.Lend(k)
		if o == nil || o.Variant(nil) == nil || o.Variants[0].File == nil {
			b.Fatalf("%s not lent", k)
		}
		o.Variants[0].File.Close()
	}
}

// pages30K is 400 pages of 30 KB on disk, none in a RAM tier of 1 MiB;
// the timer starts when it returns.
func pages30K(b *testing.B) (*cache.Cache, *Tier, [][]byte) {
	dir := b.TempDir()
	c, err := cache.New(cache.Config{Size: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	w, err := Open(Config{Path: dir, Size: 1 << 30}, c)
	if err != nil {
		b.Fatal(err)
	}
	body := string(make([]byte, 30<<10))
	keys := make([][]byte, 400)
	for i := range keys {
		k := fmt.Sprintf("http://bench.test/page30k.php?n=%d", i)
		keys[i] = []byte(k)
		c.Insert(c.Hash(keys[i]), k, cache.VarySpec{}, entry("", body))
	}
	if err := w.Close(); err != nil { // writes every copy
		b.Fatal(err)
	}
	small, err := cache.New(cache.Config{Size: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	t, err := Open(Config{Path: dir, Size: 1 << 30, RAM: 1}, small)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = t.Close() }) // the benchmark's files: nothing to keep
	b.ReportAllocs()
	b.SetBytes(30 << 10)
	b.ResetTimer()
	return small, t, keys
}
