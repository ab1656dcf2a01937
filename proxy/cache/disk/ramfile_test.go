package disk

import (
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

func fileOf(n node, key string, e *cache.Entry) *cache.BodyFile { return n.c.FileOf([]byte(key), e) }

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
	if f := n.c.FileOf(key, e); f == nil {
		t.Fatal("not lent")
	} else {
		f.Close()
	}
	allocs := testing.AllocsPerRun(100, func() {
		f := n.c.FileOf(key, e)
		f.Open(f.Body, nil).Close()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per hit", allocs)
	}
}
