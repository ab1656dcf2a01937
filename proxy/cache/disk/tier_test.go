package disk

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// node is one run of a process: a cache and its disk tier over dir.
type node struct {
	c *cache.Cache
	t *Tier
}

func start(t *testing.T, dir string, cfg Config) node {
	t.Helper()
	return open(t, dir, 64<<20, cfg, true)
}

func (n node) stop(t *testing.T) {
	t.Helper()
	if err := n.t.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func entry(variant, body string, tags ...string) *cache.Entry {
	now := time.Now().UnixNano()
	return &cache.Entry{
		Variant: variant, Status: 200, Body: []byte(body), Tags: tags,
		Header:      []cache.Field{{Name: []byte("Cache-Control"), Value: []byte("max-age=60")}},
		Internal:    []cache.Field{{Name: []byte("X-Litespeed-Tag"), Value: []byte("a,b")}},
		ETag:        []byte(`"e1"`),
		ETagWeak:    []byte(`W/"e1"`),
		ContentType: []byte("text/html"),
		Gzip:        []byte("gz:" + body),
		Born:        now - 1000, Stored: now, InitialAge: 3,
		FreshUntil: now + int64(time.Hour), StaleUntil: now + 2*int64(time.Hour),
		ErrorUntil: now + 3*int64(time.Hour), Shared: true,
	}
}

func store(n node, key string, vary cache.VarySpec, e *cache.Entry) {
	n.c.Insert(n.c.Hash([]byte(key)), key, vary, e)
}

func lookup(n node, key, variant string) *cache.Entry {
	o := n.c.Lookup(n.c.Hash([]byte(key)), []byte(key))
	if o == nil {
		return nil
	}
	return o.Variant([]byte(variant))
}

var aeVary = cache.VarySpec{Headers: []string{"accept-encoding"}, Cookies: []string{"lang"}}

// stored is e as the disk gives it back: only what a file holds.
func stored(e *cache.Entry) cache.Entry {
	c := *e
	c.Head, c.Doc, c.Tally = nil, nil, nil
	return c
}

func TestRestartKeepsEntriesWithVariantsTagsAndESIDocs(t *testing.T) {
	dir := t.TempDir()
	revive := func(key string, e *cache.Entry, doc bool) bool {
		if doc {
			e.Doc = "parsed:" + string(e.Body)
		}
		return true
	}
	a := start(t, dir, Config{Revive: revive})
	gz, br := entry("gzip\x00fr\x00", "bonjour", "s\x00post-1", "s\x02"), entry("br\x00en\x00", "hello", "s\x00post-1")
	br.Brotli, br.Gzip = []byte("brotli"), nil
	esiPage := entry("", "<esi:include src=/f>", "s\x00home")
	esiPage.Doc, esiPage.Gzip = "anything", nil
	store(a, "http://s/p", aeVary, gz)
	store(a, "http://s/p", aeVary, br)
	store(a, "http://s/esi", cache.VarySpec{}, esiPage)
	a.stop(t)

	b := start(t, dir, Config{Revive: revive})
	if l := b.t.Loaded(); !l.Clean || l.Objects != 2 || l.Entries != 3 {
		t.Fatalf("Loaded = %+v, want clean, 2 objects, 3 entries", l)
	}
	for _, want := range []struct {
		key string
		e   *cache.Entry
	}{{"http://s/p", gz}, {"http://s/p", br}, {"http://s/esi", esiPage}} {
		got := lookup(b, want.key, want.e.Variant)
		if got == nil {
			t.Fatalf("%s %q not loaded", want.key, want.e.Variant)
		}
		if g, w := stored(got), stored(want.e); !reflect.DeepEqual(g, w) {
			t.Errorf("%s %q:\n got %+v\nwant %+v", want.key, want.e.Variant, g, w)
		}
	}
	if doc := lookup(b, "http://s/esi", "").Doc; doc != "parsed:<esi:include src=/f>" {
		t.Errorf("ESI doc = %v, want rebuilt from the body", doc)
	}
	if got := b.c.Lookup(b.c.Hash([]byte("http://s/p")), []byte("http://s/p")).Vary; !got.Equal(aeVary) {
		t.Errorf("vary = %+v, want %+v", got, aeVary)
	}
}

func TestESIPageWithoutReviveIsDropped(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	e := entry("", "<esi:include src=/f>")
	e.Doc = "parsed"
	store(a, "http://s/esi", cache.VarySpec{}, e)
	a.stop(t)
	b := start(t, dir, Config{})
	if lookup(b, "http://s/esi", "") != nil {
		t.Fatal("an ESI page was loaded without its parse: its markup would be served")
	}
}

func TestPurgesBeforeRestartAreHonoured(t *testing.T) {
	tests := []struct {
		name  string
		purge func(c *cache.Cache)
		gone  []string
	}{
		{"tag", func(c *cache.Cache) { c.PurgeTag("s\x00post-1", false, 0) }, []string{"http://s/1"}},
		{"soft tag", func(c *cache.Cache) { c.PurgeTag("s\x00post-1", true, 0) }, []string{"http://s/1"}},
		{"tag pattern", func(c *cache.Cache) {
			c.PurgeTagsMatching(func(t string) bool { return t == "s\x00post-2" }, false, 0)
		}, []string{"http://s/2"}},
		{"site", func(c *cache.Cache) { c.PurgeTag("s\x02", false, 0) }, []string{"http://s/1", "http://s/2"}},
		{"all", func(c *cache.Cache) { c.PurgeAll(false, 0) }, []string{"http://s/1", "http://s/2", "http://t/3"}},
		{"soft all", func(c *cache.Cache) { c.PurgeAll(true, 0) }, []string{"http://s/1", "http://s/2", "http://t/3"}},
		{"key", func(c *cache.Cache) { c.PurgeKey(c.Hash([]byte("http://t/3")), []byte("http://t/3"), false) }, []string{"http://t/3"}},
		{"remove", func(c *cache.Cache) { c.Remove(c.Hash([]byte("http://t/3")), []byte("http://t/3")) }, []string{"http://t/3"}},
		{"keys", func(c *cache.Cache) {
			c.PurgeKeys(func(k string) bool { return k == "http://s/2" }, true)
		}, []string{"http://s/2"}},
		// A gap still in its grace keeps the files (gap_test.go).
		{"gap past its grace", func(c *cache.Cache) { c.MarkGap(time.Nanosecond) }, []string{"http://s/1", "http://s/2", "http://t/3"}},
		{"now uncacheable", func(c *cache.Cache) {
			c.MarkPass(c.Hash([]byte("http://t/3")), "http://t/3", time.Now().Add(time.Minute).UnixNano())
		}, []string{"http://t/3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			a := start(t, dir, Config{})
			store(a, "http://s/1", cache.VarySpec{}, entry("", "1", "s\x00post-1", "s\x02"))
			store(a, "http://s/2", cache.VarySpec{}, entry("", "2", "s\x00post-2", "s\x02"))
			store(a, "http://t/3", cache.VarySpec{}, entry("", "3", "t\x02"))
			written(t, a, 3) // on disk before the purge: the purge must delete them
			tt.purge(a.c)
			a.stop(t)
			b := start(t, dir, Config{})
			for _, k := range []string{"http://s/1", "http://s/2", "http://t/3"} {
				gone := false
				for _, g := range tt.gone {
					gone = gone || g == k
				}
				if got := lookup(b, k, ""); (got == nil) != gone {
					t.Errorf("%s loaded = %v, want %v", k, got != nil, !gone)
				}
			}
		})
	}
}

// An entry RAM evicted is still on disk: a purge of its tag must reach
// it although the RAM cache no longer knows the tag.
func TestPurgeReachesEntriesOnlyOnDisk(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	store(a, "http://s/1", cache.VarySpec{}, entry("", "1", "s\x00post-1"))
	a.stop(t) // written
	a2 := start(t, dir, Config{RAM: 1})
	if l := a2.t.Loaded(); l.Kept != 1 || lookup(a2, "http://s/1", "") != nil {
		t.Fatalf("Loaded = %+v: want the file kept on disk only", l)
	}
	a2.c.PurgeTag("s\x00post-1", false, 0)
	a2.stop(t)
	b := start(t, dir, Config{})
	if lookup(b, "http://s/1", "") != nil {
		t.Fatal("a purge while the entry was on disk only was lost")
	}
}

func TestUncleanShutdownIsReported(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	store(a, "http://s/1", cache.VarySpec{}, entry("", "1"))
	a.stop(t)
	b := start(t, dir, Config{}) // takes the marker; "crashes" without Close
	if !b.t.Loaded().Clean {
		t.Fatal("first start after a clean stop reported unclean")
	}
	c := start(t, dir, Config{})
	if l := c.t.Loaded(); l.Clean || l.Objects != 1 {
		t.Fatalf("Loaded = %+v, want unclean with the object loaded", l)
	}
}

// written waits until the writer copied n objects.
func written(t *testing.T, n node, want uint64) {
	t.Helper()
	// polls the writer's counter; nothing to wait on
	if !testbed.Poll(10*time.Second, func() bool { return n.t.Snapshot().Written >= want }) {
		t.Fatalf("snapshot %+v: %d copies never written", n.t.Snapshot(), want)
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	fs, err := filepath.Glob(filepath.Join(dir, objectsDir, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestTruncatedOrCorruptFilesAreDropped(t *testing.T) {
	damage := map[string]func(b []byte) []byte{
		"truncated":   func(b []byte) []byte { return b[:len(b)/2] },
		"empty":       func([]byte) []byte { return nil },
		"flipped bit": func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"no checksum": func(b []byte) []byte { return b[:len(b)-4] },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			a := start(t, dir, Config{})
			store(a, "http://s/1", cache.VarySpec{}, entry("", "one body"))
			a.stop(t)
			fs := files(t, dir)
			if len(fs) != 1 {
				t.Fatalf("files = %v", fs)
			}
			b, err := os.ReadFile(fs[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(fs[0], f(b), 0o600); err != nil {
				t.Fatal(err)
			}
			n := start(t, dir, Config{})
			if l := n.t.Loaded(); l.Corrupt != 1 || l.Objects != 0 || lookup(n, "http://s/1", "") != nil {
				t.Fatalf("Loaded = %+v: the damaged file was not dropped", l)
			}
			if fs := files(t, dir); len(fs) != 0 {
				t.Errorf("damaged file left on disk: %v", fs)
			}
		})
	}
}

func TestFileOfAnotherKeyIsDropped(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	store(a, "http://s/1", cache.VarySpec{}, entry("", "one"))
	a.stop(t)
	fs := files(t, dir)
	other := filepath.Join(dir, objectsDir, nameOf("http://evil/")[:2], nameOf("http://evil/"))
	if err := os.Rename(fs[0], other); err != nil {
		t.Fatal(err)
	}
	n := start(t, dir, Config{})
	if lookup(n, "http://s/1", "") != nil || n.t.Loaded().Corrupt != 1 {
		t.Fatalf("Loaded = %+v: a file under another key's name was trusted", n.t.Loaded())
	}
}

func TestExpiredEntriesAreNotLoaded(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	e := entry("", "old")
	e.FreshUntil, e.StaleUntil, e.ErrorUntil = e.Stored+1, e.Stored+1, e.Stored+1
	store(a, "http://s/old", cache.VarySpec{}, entry("", "new"))
	a.t.Stored(a.c.Hash([]byte("x")), &cache.Object{Key: "x"}, a.t.Seq()) // not what the cache holds: skipped
	store(a, "http://s/old", cache.VarySpec{}, e)
	a.stop(t)
	if n := start(t, dir, Config{}); lookup(n, "http://s/old", "") != nil {
		t.Fatal("an expired entry was loaded")
	}
}

func TestSizeBoundEvictsOldestFiles(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{Size: 600})
	for _, k := range []string{"http://s/1", "http://s/2", "http://s/3"} {
		store(a, k, cache.VarySpec{}, entry("", string(make([]byte, 200))))
	}
	a.stop(t)
	s := a.t.Snapshot()
	if s.Bytes > 600 || s.Evicted == 0 {
		t.Fatalf("snapshot %+v: over the bound", s)
	}
	b := start(t, dir, Config{Size: 600})
	if lookup(b, "http://s/3", "") == nil || lookup(b, "http://s/1", "") != nil {
		t.Fatal("want the newest kept and the oldest evicted")
	}
}

func TestFailedWriteDegradesToRAMOnly(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{Retry: time.Hour})
	if err := os.RemoveAll(filepath.Join(dir, tmpDir)); err != nil { // every write now fails
		t.Fatal(err)
	}
	store(a, "http://s/1", cache.VarySpec{}, entry("", "1"))
	store(a, "http://s/2", cache.VarySpec{}, entry("", "2"))
	a.stop(t)
	s := a.t.Snapshot()
	if !s.Degraded || s.Failed != 1 || s.Dropped != 1 || s.Written != 0 {
		t.Fatalf("snapshot %+v: want degraded after one failure, the next copy dropped", s)
	}
	if lookup(a, "http://s/2", "") == nil {
		t.Fatal("RAM cache lost the entry")
	}
}

// A process that hands the directory on (an upgrade) leaves no marker:
// the successor loaded it already, and a crash of the successor must
// still read as one.
func TestLeavingTheTierToASuccessorVouchesForNothing(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	store(a, "http://s/1", cache.VarySpec{}, entry("", "1"))
	a.stop(t)
	old := start(t, dir, Config{}) // the running process, marker taken
	successor := start(t, dir, Config{})
	if err := old.t.Leave(); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	_ = successor // "crashes": never closed
	if l := start(t, dir, Config{}).t.Loaded(); l.Clean {
		t.Fatalf("Loaded = %+v after the predecessor left and its successor crashed, want unclean", l)
	}
}
