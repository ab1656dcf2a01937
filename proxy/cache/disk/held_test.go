package disk

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// lentOnce lends key and gives the lend back, returning the copy lent
// (nil: none).
func lentOnce(t *testing.T, n node, key string) *cache.Object {
	t.Helper()
	o := lend(n, key)
	if o != nil {
		o.Variants[0].File.Close()
	}
	return o
}

// closedFile reports whether the kept file of a lent copy was closed.
func closedFile(o *cache.Object) bool {
	return o.Variants[0].File.File.Fd() == ^uintptr(0) // os.File's answer once closed
}

func pathOfKey(dir, key string) string {
	return filepath.Join(dir, objectsDir, nameOf(key)[:2], nameOf(key))
}

func TestLentFileIsKeptOpenAndLentAgainWithoutOpeningIt(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := checked(t, dir, true)
	first := lentOnce(t, b, "http://s/1")
	if first == nil {
		t.Fatal("a checked file was not lent")
	}
	if b.t.Held() != 1 {
		t.Fatalf("%d files kept open, want 1", b.t.Held())
	}
	// Gone from its name: only the descriptor kept can lend it now (and
	// Recheck, 1s by default, has not come).
	if err := os.Rename(pathOfKey(dir, "http://s/1"), filepath.Join(dir, "aside")); err != nil {
		t.Fatal(err)
	}
	again := lend(b, "http://s/1")
	if again == nil {
		t.Fatal("the file kept open was not lent again")
	}
	defer again.Variants[0].File.Close()
	if again != first || again.Variants[0].File.FD != first.Variants[0].File.FD {
		t.Fatal("lent again from another descriptor: the kept one was not used")
	}
	if got := string(bodyOf(t, again.Variants[0].File, again.Variants[0].File.Body)); got != "body of http://s/1" {
		t.Fatalf("body %q", got)
	}
	if s := b.t.Snapshot(); s.Lent != 2 {
		t.Fatalf("lent %d, want 2", s.Lent)
	}
}

// Whatever unindexes a key's file drops its kept descriptor at once: a
// new copy, a purge, an eviction for room. None is lent again from it.
func TestKeptFileOfAKeyRewrittenPurgedOrEvictedIsClosedAndNeverLentAgain(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, n node)
	}{
		{"rewritten", func(t *testing.T, n node) {
			before := n.t.Snapshot().Written
			store(n, "http://s/1", cache.VarySpec{}, entry("", "the new body", "s\x00http://s/1"))
			written(t, n, before+1)
		}},
		{"purged", func(t *testing.T, n node) {
			n.c.PurgeTag("s\x00http://s/1", false, 0)
			settled(n)
		}},
		{"evicted", func(t *testing.T, n node) {
			before := n.t.Snapshot().Written
			store(n, "http://s/big", cache.VarySpec{}, entry("", strings.Repeat("x", 3<<20)))
			written(t, n, before+1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			onDiskOnly(t, dir, "http://s/1")
			b := open(t, dir, 64<<20, Config{RAM: 1, Size: 3 << 20}, true)
			o := lentOnce(t, b, "http://s/1")
			if o == nil {
				t.Fatal("a checked file was not lent")
			}
			tt.change(t, b)
			if !closedFile(o) || b.t.Held() != 0 {
				t.Fatalf("the kept descriptor is open still (%d kept)", b.t.Held())
			}
			if again := lentOnce(t, b, "http://s/1"); again != nil {
				t.Fatalf("lent again after it was %s", tt.name)
			}
		})
	}
}

// An answer sending from a kept file when the tier drops it finishes:
// the descriptor is closed when the answer gives it back, not before.
func TestDroppedKeptFileStaysOpenUntilItsAnswersEnd(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := checked(t, dir, true)
	o := lend(b, "http://s/1")
	if o == nil {
		t.Fatal("a checked file was not lent")
	}
	sec := o.Variants[0].File.Open(o.Variants[0].File.Body, nil) // an answer's body
	b.c.PurgeTag("s\x00http://s/1", false, 0)
	settled(b)
	if closedFile(o) {
		t.Fatal("closed while an answer sends from it")
	}
	buf := make([]byte, 64)
	n, err := sec.Read(buf)
	if err != nil || string(buf[:n]) != "body of http://s/1" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	sec.Close()
	if !closedFile(o) {
		t.Fatal("not closed once its answer ended")
	}
}

func TestKeptFilesPastTheBoundCloseTheLeastRecentlyLent(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1", "http://s/2", "http://s/3")
	b := open(t, dir, 64<<20, Config{RAM: 1, OpenFiles: 2}, true)
	one, two := lentOnce(t, b, "http://s/1"), lentOnce(t, b, "http://s/2")
	if lentOnce(t, b, "http://s/1") != one { // 2 is the least recently lent now
		t.Fatal("not lent from the kept file")
	}
	three := lentOnce(t, b, "http://s/3")
	if one == nil || two == nil || three == nil {
		t.Fatal("not lent")
	}
	if b.t.Held() != 2 {
		t.Fatalf("%d files kept open, bound 2", b.t.Held())
	}
	if !closedFile(two) || closedFile(one) || closedFile(three) {
		t.Fatalf("closed: 1 %v, 2 %v, 3 %v; want only 2, the least recently lent", closedFile(one), closedFile(two), closedFile(three))
	}
	if again := lentOnce(t, b, "http://s/2"); again == nil || again == two {
		t.Fatal("2 was not opened again")
	}
}

func TestCloseClosesEveryKeptFile(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"http://s/1", "http://s/2", "http://s/3"}
	onDiskOnly(t, dir, keys...)
	b := checked(t, dir, true)
	var lent []*cache.Object
	for _, k := range keys {
		lent = append(lent, lentOnce(t, b, k))
	}
	b.stop(t)
	for i, o := range lent {
		if o == nil || !closedFile(o) {
			t.Fatalf("%s: kept open after Close", keys[i])
		}
	}
	if b.t.Held() != 0 {
		t.Fatalf("%d kept", b.t.Held())
	}
}

// A kept file is checked again with fstat once Recheck passed: one
// truncated or rewritten underneath is not lent from the kept descriptor.
func TestKeptFileChangedUnderneathIsDroppedAtItsRecheck(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := open(t, dir, 64<<20, Config{RAM: 1, Recheck: time.Nanosecond}, true)
	o := lentOnce(t, b, "http://s/1")
	if o == nil {
		t.Fatal("not lent")
	}
	if err := os.Truncate(pathOfKey(dir, "http://s/1"), 20); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond) // past Recheck on the cache's clock
	if lentOnce(t, b, "http://s/1") != nil {
		t.Fatal("a kept file truncated underneath was lent")
	}
	if !closedFile(o) {
		t.Fatal("the changed file's descriptor is kept")
	}
}

// The process's bound is shared by every tier (a site's share is one):
// a tier past it closes its own least recently lent, and one with none
// to close keeps none, lending its file for one answer.
func TestProcessBoundOnKeptFilesIsSharedByEveryTier(t *testing.T) {
	bound := processOpenFiles
	processOpenFiles = func() int64 { return 2 }
	t.Cleanup(func() { processOpenFiles = bound })
	dirA, dirB := t.TempDir(), t.TempDir()
	onDiskOnly(t, dirA, "http://a/1", "http://a/2", "http://a/3")
	onDiskOnly(t, dirB, "http://b/1")
	a, b := checked(t, dirA, true), checked(t, dirB, true)
	one, two := lentOnce(t, a, "http://a/1"), lentOnce(t, a, "http://a/2")
	other := lentOnce(t, b, "http://b/1")
	if one == nil || two == nil || other == nil {
		t.Fatal("not lent")
	}
	if a.t.Held() != 2 || b.t.Held() != 0 || !closedFile(other) {
		t.Fatalf("kept %d and %d (b's closed: %v); want a's 2 and none of b's: the process's bound is 2", a.t.Held(), b.t.Held(), closedFile(other))
	}
	if lentOnce(t, a, "http://a/3") == nil || a.t.Held() != 2 || !closedFile(one) {
		t.Fatalf("kept %d; want 2, a/1 (the least recently lent) closed for a/3", a.t.Held())
	}
}

// A hit on a kept file allocates nothing.
func TestLendOfAKeptFileAllocatesNothing(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := checked(t, dir, true)
	if lentOnce(t, b, "http://s/1") == nil {
		t.Fatal("not lent")
	}
	key := []byte("http://s/1")
	allocs := testing.AllocsPerRun(100, func() {
		o := b.c.Lend(key)
		sec := o.Variants[0].File.Open(o.Variants[0].File.Body, nil)
		sec.Close()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per hit", allocs)
	}
}

// settled waits until the writer applied what is queued.
func settled(n node) {
	done := make(chan struct{})
	n.t.flush <- flush{done: done}
	<-done
}

// Answers lending kept files while the bound closes some and new copies
// replace others: every body read is whole and one that was stored, and
// once a new copy is written, the old body is never lent again.
func TestKeptFilesUnderConcurrentLendsRewritesAndTheBound(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"http://s/1", "http://s/2", "http://s/3", "http://s/4"}
	onDiskOnly(t, dir, keys...)
	b := open(t, dir, 64<<20, Config{RAM: 1, OpenFiles: 2}, true)
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for g := range 4 {
		go func() {
			buf := make([]byte, 64)
			for i := g; ; i++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				k := keys[i%len(keys)]
				o := lend(b, k)
				if o == nil {
					continue
				}
				f := o.Variants[0].File
				sec := f.Open(f.Body, nil)
				n, err := io.ReadFull(sec, buf[:f.Body.Len])
				sec.Close()
				if err != nil || !strings.HasSuffix(string(buf[:n]), k) {
					errs <- fmt.Errorf("%s: read %q, %v", k, buf[:n], err)
					return
				}
			}
		}()
	}
	for round := range 5 {
		before := b.t.Snapshot().Written
		store(b, "http://s/1", cache.VarySpec{}, entry("", fmt.Sprintf("new %d of http://s/1", round)))
		written(t, b, before+1)
		// The writer counts a copy just before it indexes it: until then
		// the old copy is the tier's still. The new one is not lent
		// before a whole read checked it.
		// (polled: the index has no event to wait on)
		if !testbed.Poll(5*time.Second, func() bool { return lentOnce(t, b, "http://s/1") == nil }) {
			t.Fatalf("round %d: the old copy still lent", round)
		}
		b.t.Fetch(b.c.Hash([]byte("http://s/1")), []byte("http://s/1")) // reads the new file whole
		// Read while the lend is held: the bound may close the file
		// as soon as it is given back.
		o := lend(b, "http://s/1")
		if o == nil {
			t.Fatalf("round %d: the new copy not lent", round)
		}
		got := string(bodyOf(t, o.Variants[0].File, o.Variants[0].File.Body))
		o.Variants[0].File.Close()
		if got != fmt.Sprintf("new %d of http://s/1", round) {
			t.Fatalf("round %d: lent %q, an older body", round, got)
		}
	}
	close(stop)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
