package disk

import (
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

func fileOf(n node, key string, e *cache.Entry) *cache.BodyFile {
	return n.c.FileOf([]byte(key), e, n.c.Now())
}

// A copy in RAM the tier wrote is lent from its file: each body (the
// identity one, the gzip copy) at its own span, the variant's own.
func TestRAMCopyTheTierWroteIsLentFromItsFile(t *testing.T) {
	n := start(t, t.TempDir(), Config{})
	a, b := entry("a\x00", "body of a"), entry("b\x00", "the body of b")
	store(n, "http://s/1", aeVary, a)
	written(t, n, 1)
	store(n, "http://s/1", aeVary, b) // the file written now holds both
	written(t, n, 2)
	for _, e := range []*cache.Entry{a, b} {
		f := fileOf(n, "http://s/1", e)
		if f == nil {
			t.Fatalf("variant %q: not lent from the file written from it", e.Variant)
		}
		if got := bodyOf(t, f, f.Body); string(got) != string(e.Body) {
			t.Errorf("variant %q: body %q, want %q", e.Variant, got, e.Body)
		}
		if got := bodyOf(t, f, f.Gzip); string(got) != string(e.Gzip) {
			t.Errorf("variant %q: gzip copy %q, want %q", e.Variant, got, e.Gzip)
		}
		f.Close()
	}
	if s := n.t.Snapshot(); s.Lent != 2 {
		t.Errorf("%d lent from files, want 2", s.Lent)
	}
	if o := lend(n, "http://s/1"); o != nil {
		t.Error("Lend lent a file no whole read checked") // FileOf's opening changes nothing for Lend
	}
}

// A copy in RAM is lent only from a file written from that very copy: a
// newer one (refreshed, the file not rewritten yet), an older one (the
// file rewritten since) or one of the same size are copied from RAM.
func TestRAMCopyIsNeverLentAFileOfAnotherCopy(t *testing.T) {
	n := start(t, t.TempDir(), Config{})
	old := entry("", "old body")
	store(n, "http://s/1", cache.VarySpec{}, old)
	written(t, n, 1)
	if f := fileOf(n, "http://s/1", entry("", "new body")); f != nil {
		f.Close()
		t.Fatal("a copy of the same size the file was not written from was lent it")
	}
	newer := entry("", "new body")
	store(n, "http://s/1", cache.VarySpec{}, newer)
	if f := fileOf(n, "http://s/1", newer); f != nil { // the writer may have written it by now
		if got := bodyOf(t, f, f.Body); string(got) != "new body" {
			t.Fatalf("the newer copy was lent the file of the older: %q", got)
		}
		f.Close()
	}
	written(t, n, 2)
	if f := fileOf(n, "http://s/1", newer); f == nil {
		t.Fatal("the newer copy not lent once its file is written")
	} else {
		f.Close()
	}
	if f := fileOf(n, "http://s/1", old); f != nil {
		f.Close()
		t.Fatal("the older copy was lent the newer copy's file")
	}
}

// A purge takes the file with it: the copy it was written from (still
// referenced here) is never lent it again, nor is its descriptor kept.
func TestPurgedCopyIsNeverLentItsFile(t *testing.T) {
	n := start(t, t.TempDir(), Config{})
	e := entry("", strings.Repeat("p", 100), "s\x00http://s/1")
	store(n, "http://s/1", cache.VarySpec{}, e)
	written(t, n, 1)
	f := fileOf(n, "http://s/1", e)
	if f == nil {
		t.Fatal("not lent before the purge")
	}
	f.Close()
	n.c.PurgeTag("s\x00http://s/1", false, 0)
	settled(n)
	if f := fileOf(n, "http://s/1", e); f != nil {
		f.Close()
		t.Fatal("a purged copy was lent its file")
	}
	if n.t.Held() != 0 {
		t.Errorf("%d files kept open after the purge", n.t.Held())
	}
}

// The copies loaded at start are the files': lent from them.
func TestCopyLoadedAtStartIsLentFromItsFile(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	store(a, "http://s/1", cache.VarySpec{}, entry("", "loaded body"))
	written(t, a, 1)
	a.stop(t)
	b := start(t, dir, Config{})
	e := lookup(b, "http://s/1", "")
	if e == nil {
		t.Fatal("not loaded")
	}
	f := fileOf(b, "http://s/1", e)
	if f == nil {
		t.Fatal("the loaded copy not lent from its file")
	}
	defer f.Close()
	if got := bodyOf(t, f, f.Body); string(got) != "loaded body" {
		t.Errorf("body %q", got)
	}
}

// A RAM hit sent from its kept file allocates nothing.
func TestRAMCopysFileLendAllocatesNothing(t *testing.T) {
	n := start(t, t.TempDir(), Config{})
	e := entry("", strings.Repeat("b", 20000))
	store(n, "http://s/1", cache.VarySpec{}, e)
	written(t, n, 1)
	key := []byte("http://s/1")
	if f := n.c.FileOf(key, e, n.c.Now()); f == nil {
		t.Fatal("not lent")
	} else {
		f.Close()
	}
	allocs := testing.AllocsPerRun(100, func() {
		f := n.c.FileOf(key, e, n.c.Now())
		f.Open(f.Body, nil).Close()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per hit", allocs)
	}
}

// A hit finds its file by its entry's address (ties): an entry at an
// address another entry held, as a new entry at a collected one's
// address is, is never lent that entry's file.
func TestEntryAtAnotherEntrysAddressIsNeverLentItsFile(t *testing.T) {
	n := start(t, t.TempDir(), Config{})
	e := entry("", strings.Repeat("o", 100))
	store(n, "http://s/1", cache.VarySpec{}, e)
	written(t, n, 1)
	other := entry("", strings.Repeat("n", 100)) // same key, variant and size
	n.t.gate.Lock()
	n.t.ties[addrOf(other)] = n.t.ties[addrOf(e)] // as if other reused e's address
	n.t.gate.Unlock()
	if f := fileOf(n, "http://s/1", other); f != nil {
		got := bodyOf(t, f, f.Body)
		f.Close()
		t.Fatalf("an entry at the address of another was lent its file: %q", got)
	}
	if f := fileOf(n, "http://s/1", e); f == nil {
		t.Fatal("the entry the file holds was not lent it")
	} else {
		f.Close()
	}
}

// The entries' index (ties) follows the index of files: a file a new
// copy replaced, a purge or an eviction took leaves nothing in it, and
// an entry a newer file holds too is found under the newer one.
func TestTiesHoldExactlyTheIndexedFilesEntries(t *testing.T) {
	n := open(t, t.TempDir(), 64<<20, Config{Size: 3 << 20}, true)
	a, b := entry("a\x00", "body of a", "s\x00http://s/1"), entry("b\x00", "the body of b", "s\x00http://s/1")
	store(n, "http://s/1", aeVary, a)
	written(t, n, 1)
	store(n, "http://s/1", aeVary, b) // a second file of the key, holding a and b
	written(t, n, 2)
	two := entry("", "two")
	store(n, "http://s/2", cache.VarySpec{}, two)
	written(t, n, 3)
	mustTiesBeIndexed(t, n, 3)
	n.t.gate.RLock()
	newer := n.t.files[nameOf("http://s/1")]
	found := n.t.ties[addrOf(a)]
	n.t.gate.RUnlock()
	if found != newer {
		t.Fatal("the entry both files of its key hold is not found under the newer")
	}

	n.c.PurgeTag("s\x00http://s/1", false, 0)
	settled(n)
	mustTiesBeIndexed(t, n, 1)
	for _, e := range []*cache.Entry{a, b} {
		if f := fileOf(n, "http://s/1", e); f != nil {
			f.Close()
			t.Fatalf("variant %q lent its purged file", e.Variant)
		}
	}

	// Past the tier's size: evicts http://s/2's file, then its own.
	store(n, "http://s/big", cache.VarySpec{}, entry("", strings.Repeat("x", 3<<20)))
	written(t, n, 4)
	mustTiesBeIndexed(t, n, 0)
	if f := fileOf(n, "http://s/2", two); f != nil {
		f.Close()
		t.Fatal("an entry was lent its evicted file")
	}
}

// mustTiesBeIndexed fails unless ties holds the entries of the indexed
// files, and only those (want of them).
func mustTiesBeIndexed(t *testing.T, n node, want int) {
	t.Helper()
	n.t.gate.RLock()
	defer n.t.gate.RUnlock()
	entries := 0
	for _, f := range n.t.files {
		if f.from == nil {
			continue
		}
		entries += len(f.from.at)
		for _, at := range f.from.at {
			if n.t.ties[at] != f {
				t.Fatalf("an entry of the indexed file %s is not found under it", f.name)
			}
		}
	}
	if len(n.t.ties) != entries || entries != want {
		t.Fatalf("ties holds %d entries; the indexed files hold %d, want %d", len(n.t.ties), entries, want)
	}
}
