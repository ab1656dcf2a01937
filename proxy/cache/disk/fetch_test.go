package disk

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// open is start without the writer when !writing: purges stay queued,
// as while the writer is busy.
func open(t *testing.T, dir string, ramSize int64, cfg Config, writing bool) node {
	t.Helper()
	c, err := cache.New(cache.Config{Size: ramSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // never fails
	cfg.Path = dir
	if cfg.Size == 0 {
		cfg.Size = 64 << 20
	}
	tier, err := Open(cfg, c)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if writing {
		tier.Start(t.Context())
	}
	return node{c, tier}
}

func fetch(n node, key, variant string) *cache.Entry {
	o := n.c.Fetch(n.c.Hash([]byte(key)), []byte(key))
	if o == nil {
		return nil
	}
	return o.Variant([]byte(variant))
}

// onDiskOnly leaves the keys (one entry each, tagged "s\x00<key>" and
// "s\x02") on disk and none in RAM.
func onDiskOnly(t *testing.T, dir string, keys ...string) {
	t.Helper()
	a := start(t, dir, Config{})
	for _, k := range keys {
		store(a, k, cache.VarySpec{}, entry("", "body of "+k, "s\x00"+k, "s\x02"))
	}
	a.stop(t)
}

func TestMissInRAMIsAnsweredFromDisk(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	gz, br := entry("gzip\x00fr\x00", "bonjour", "s\x00p"), entry("br\x00en\x00", "hello", "s\x00p")
	store(a, "http://s/p", aeVary, gz)
	store(a, "http://s/p", aeVary, br)
	a.stop(t)

	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	if lookup(b, "http://s/p", gz.Variant) != nil {
		t.Fatal("loaded into RAM: the test needs the file on disk only")
	}
	for _, want := range []*cache.Entry{gz, br} {
		got := fetch(b, "http://s/p", want.Variant)
		if got == nil {
			t.Fatalf("variant %q not fetched from disk", want.Variant)
		}
		if g, w := stored(got), stored(want); !reflect.DeepEqual(g, w) {
			t.Errorf("%q:\n got %+v\nwant %+v", want.Variant, g, w)
		}
	}
	if lookup(b, "http://s/p", br.Variant) == nil {
		t.Error("the fetched copy is not in RAM afterwards")
	}
	if s := b.t.Snapshot(); s.Hits != 1 {
		t.Errorf("snapshot %+v: want 1 hit", s)
	}
	if fetch(b, "http://s/none", "") != nil {
		t.Error("a key never stored was fetched")
	}
}

// A working set larger than RAM: every page is answered, from RAM or
// from disk, and the disk never gets the copies it gave back again.
func TestWorkingSetLargerThanRAMIsServedFromDisk(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, 256<<10, Config{}, true) // RAM for about 8 pages of 30 KB
	body := string(make([]byte, 30<<10))
	var keys []string
	for i := range 40 {
		k := fmt.Sprintf("http://s/%d", i)
		keys = append(keys, k)
		store(a, k, cache.VarySpec{}, entry("", body+k))
	}
	written(t, a, 40) // RAM evicted most before the writer got to them
	for range 2 {
		for _, k := range keys {
			got := fetch(a, k, "")
			if got == nil || string(got.Body) != body+k {
				t.Fatalf("%s not answered from RAM or disk", k)
			}
		}
	}
	s := a.t.Snapshot()
	if s.Hits < 40 {
		t.Errorf("snapshot %+v: want most of 80 lookups answered from disk", s)
	}
	if s.Written != 40 {
		t.Errorf("snapshot %+v: copies fetched from disk were written again", s)
	}
}

// A purge queued but not yet applied to the files (the writer is busy)
// must still keep the copies it covers from coming back.
func TestQueuedPurgeCoversFilesOnlyOnDisk(t *testing.T) {
	tests := []struct {
		name  string
		purge func(c *cache.Cache)
		gone  string
	}{
		{"tag", func(c *cache.Cache) { c.PurgeTag("s\x00http://s/1", false, 0) }, "http://s/1"},
		{"soft tag", func(c *cache.Cache) { c.PurgeTag("s\x00http://s/1", true, 0) }, "http://s/1"},
		{"tag pattern", func(c *cache.Cache) {
			c.PurgeTagsMatching(func(t string) bool { return t == "s\x00http://s/1" }, false, 0)
		}, "http://s/1"},
		{"url", func(c *cache.Cache) { c.PurgeKey(c.Hash([]byte("http://s/1")), []byte("http://s/1"), false) }, "http://s/1"},
		{"prefix", func(c *cache.Cache) {
			c.PurgeKeys(func(k string) bool { return k == "http://s/1" }, true)
		}, "http://s/1"},
		{"now uncacheable", func(c *cache.Cache) {
			c.MarkPass(c.Hash([]byte("http://s/1")), "http://s/1", time.Now().Add(time.Minute).UnixNano())
		}, "http://s/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			onDiskOnly(t, dir, "http://s/1", "http://s/2")
			b := open(t, dir, 64<<20, Config{RAM: 1}, false)
			tt.purge(b.c)
			if e := fetch(b, tt.gone, ""); e != nil && b.c.Status(e, b.c.Now()) != cache.Purged {
				t.Fatalf("%s served from disk after its purge (queued, not applied)", tt.gone)
			}
			if fetch(b, "http://s/2", "") == nil {
				t.Fatal("a page the purge does not cover was not fetched")
			}
		})
	}
}

// Once the writer applied it, the purge deleted the file.
func TestAppliedPurgeDeletesFilesOnlyOnDisk(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1", "http://s/2", "http://s/3")
	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	b.c.PurgeTag("s\x00http://s/1", false, 0)
	b.c.PurgeKey(b.c.Hash([]byte("http://s/2")), []byte("http://s/2"), false)
	if err := b.t.Close(); err != nil { // applies every purge
		t.Fatal(err)
	}
	if fetch(b, "http://s/1", "") != nil || fetch(b, "http://s/2", "") != nil {
		t.Fatal("a purged page was fetched from disk")
	}
	if fetch(b, "http://s/3", "") == nil {
		t.Fatal("the page no purge covers was not fetched")
	}
	if got := len(files(t, dir)); got != 1 {
		t.Errorf("%d files left, want 1", got)
	}
}

// A file damaged after it was written (a bad sector, a hand edit) is
// deleted when a fetch finds it, and never served.
func TestDamagedFileIsDroppedAtFetch(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	path := files(t, dir)[0]
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if fetch(b, "http://s/1", "") != nil {
		t.Fatal("a damaged file was served")
	}
	if err := b.t.Close(); err != nil {
		t.Fatal(err)
	}
	if s := b.t.Snapshot(); s.Corrupt != 1 || len(files(t, dir)) != 0 {
		t.Fatalf("snapshot %+v, files %v: want the damaged file counted and deleted", s, files(t, dir))
	}
}

// An object RAM evicted before the writer got to it is copied: the disk
// holds more than RAM. One a purge took out of RAM in the meantime is
// not: its copy would bring the purged page back.
func TestObjectGoneFromRAMBeforeItsCopyIsCopiedOnlyIfNoPurgeTookIt(t *testing.T) {
	tests := []struct {
		name    string
		purge   func(c *cache.Cache)
		written bool
	}{
		{"evicted", func(*cache.Cache) {}, true},
		{"url purged", func(c *cache.Cache) { c.PurgeKey(c.Hash([]byte("http://s/1")), []byte("http://s/1"), false) }, false},
		{"tag purged", func(c *cache.Cache) { c.PurgeTag("s\x00http://s/1", false, 0) }, false},
		{"prefix purged", func(c *cache.Cache) { c.PurgeKeys(func(k string) bool { return k == "http://s/1" }, true) }, false},
		{"other tag purged", func(c *cache.Cache) { c.PurgeTag("s\x00other", false, 0) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			n := open(t, dir, 64<<20, Config{}, true)
			o := &cache.Object{Key: "http://s/1", Variants: []*cache.Entry{entry("", "1", "s\x00http://s/1")}}
			seq := n.t.Seq() // as Insert takes it, before the store
			tt.purge(n.c)
			n.t.Stored(n.c.Hash([]byte(o.Key)), o, seq) // not in RAM any more
			if err := n.t.Close(); err != nil {
				t.Fatal(err)
			}
			if got := len(files(t, dir)) == 1; got != tt.written {
				t.Fatalf("copied = %v, want %v", got, tt.written)
			}
		})
	}
}

// Checkpoint applies what is queued and vouches for the files to one
// successor: it loads them as clean (Handover), and a crash of it after
// reads as a crash.
func TestCheckpointVouchesForTheFilesToOneSuccessor(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	store(a, "http://s/1", cache.VarySpec{}, entry("", "1", "s\x00one"))
	store(a, "http://s/2", cache.VarySpec{}, entry("", "2", "s\x00two"))
	a.c.PurgeTag("s\x00two", false, 0)
	if err := a.t.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	b := start(t, dir, Config{}) // a still runs, as during an upgrade
	if l := b.t.Loaded(); !l.Clean || !l.Handover || l.Objects != 1 {
		t.Fatalf("Loaded = %+v, want clean by handover with 1 object", l)
	}
	if lookup(b, "http://s/2", "") != nil {
		t.Fatal("a purge queued before the checkpoint did not reach the files")
	}
	if err := a.t.Leave(); err != nil {
		t.Fatal(err)
	}
	c := start(t, dir, Config{}) // b "crashed"
	if l := c.t.Loaded(); l.Clean || l.Handover {
		t.Fatalf("Loaded = %+v after the successor crashed, want unclean", l)
	}
}

// After Checkpoint the directory is the successor's: a copy the old
// process stores while it drains, or a gap it notes, reaches no file
// (the successor would not know it, and none of its purges would meet
// it); once an upgrade failed (Uncheckpoint) the old process writes
// again, gap marks included.
func TestAfterCheckpointTheOldProcessWritesNoFileUntilUncheckpoint(t *testing.T) {
	dir := t.TempDir()
	a := start(t, dir, Config{})
	if err := a.t.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixNano()
	store(a, "http://s/late", cache.VarySpec{}, entry("", "late", "s\x00late"))
	a.t.Gap(now, now+int64(time.Hour))
	if err := a.t.Leave(); err != nil { // writes what is queued, then returns
		t.Fatal(err)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("files after the checkpoint: %v, want none", got)
	}
	if _, err := os.Stat(filepath.Join(dir, gapFile)); !os.IsNotExist(err) {
		t.Fatalf("gap mark written after the checkpoint (stat: %v)", err)
	}

	b := start(t, dir, Config{})
	if err := b.t.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	b.t.Gap(now, now+int64(time.Hour))
	if err := b.t.Uncheckpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, gapFile)); err != nil {
		t.Fatalf("the gap kept while handed over is not marked after Uncheckpoint: %v", err)
	}
	store(b, "http://s/again", cache.VarySpec{}, entry("", "again", "s\x00again"))
	written(t, b, 1)
	b.stop(t)
}
