package disk

import (
	"os"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A fetch reads as many bytes as the index says a file holds (and a
// little more): a file another process sharing the directory rewrote
// larger since is read whole and served, not taken for a damaged one.
func TestFileRewrittenLargerSinceIndexedIsServedWhole(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	body := strings.Repeat("x", 4*slack)
	e := entry("", body, "s\x00http://s/1")
	raw := encode(nil, &object{key: "http://s/1", variants: []*cache.Entry{e}, docs: []bool{false}})
	if err := os.WriteFile(files(t, dir)[0], raw, 0o600); err != nil {
		t.Fatal(err)
	}
	got := fetch(b, "http://s/1", "")
	if got == nil || string(got.Body) != body || len(got.Tags) != 1 || got.Tags[0] != "s\x00http://s/1" {
		t.Fatalf("fetched %+v, want the rewritten entry", got)
	}
	if s := b.t.Snapshot(); s.Corrupt != 0 {
		t.Fatalf("snapshot %+v: a whole file counted as corrupt", s)
	}
}

// A file cut short after it was indexed (power loss under another
// process's write, a full disk) reads short of its header's length: it is
// deleted and never served.
func TestFileTruncatedSinceIndexedIsDroppedAtFetch(t *testing.T) {
	dir := t.TempDir()
	onDiskOnly(t, dir, "http://s/1")
	b := open(t, dir, 64<<20, Config{RAM: 1}, true)
	path := files(t, dir)[0]
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-5); err != nil {
		t.Fatal(err)
	}
	if fetch(b, "http://s/1", "") != nil {
		t.Fatal("a truncated file was served")
	}
	if err := b.t.Close(); err != nil {
		t.Fatal(err)
	}
	if s := b.t.Snapshot(); s.Corrupt != 1 || len(files(t, dir)) != 0 {
		t.Fatalf("snapshot %+v, files %v: want the truncated file counted and deleted", s, files(t, dir))
	}
}
