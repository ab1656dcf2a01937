package disk

import (
	"fmt"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// gone stores count pages of 30 KB (tagged "s\x00<key>" and "s\x02") in
// a RAM tier of 256 KiB whose writer is not started, as while it is
// busy, and returns the keys RAM evicted: their copies are in the queue
// only.
func gone(t *testing.T, n node, body string, count int) []string {
	t.Helper()
	pad := string(make([]byte, 30<<10))
	for i := range count {
		k := fmt.Sprintf("http://s/%d", i)
		store(n, k, cache.VarySpec{}, entry("", pad+body+k, "s\x00"+k, "s\x02"))
	}
	var out []string
	// polls RAM: its eviction has no event to wait on
	testbed.Poll(10*time.Second, func() bool {
		out = out[:0]
		for i := range count {
			if k := fmt.Sprintf("http://s/%d", i); lookup(n, k, "") == nil {
				out = append(out, k)
			}
		}
		return len(out) > 0
	})
	if len(out) == 0 {
		t.Fatal("RAM evicted nothing: the test needs copies in the queue only")
	}
	return out
}

func bodyIs(e *cache.Entry, body, key string) bool {
	return e != nil && len(e.Body) > 30<<10 && string(e.Body[30<<10:]) == body+key
}

// A copy RAM evicted before the writer wrote it is answered from the
// queue, newer than the file it replaces, and written afterwards.
func TestCopyWaitingForTheWriterIsServedBeforeItsFileIsWritten(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, 256<<10, Config{}, true)
	gone(t, a, "old of ", 40)
	written(t, a, 40)
	a.stop(t)

	b := open(t, dir, 256<<10, Config{RAM: 1}, false)
	keys := gone(t, b, "new of ", 40)
	for _, k := range keys {
		if o := lend(b, k); o != nil {
			o.Variants[0].File.Close()
			t.Fatalf("%s: the older file was lent while a newer copy waits for the writer", k)
		}
		if e := fetch(b, k, ""); !bodyIs(e, "new of ", k) {
			t.Fatalf("%s: not answered by the copy waiting for the writer", k)
		}
	}
	if s := b.t.Snapshot(); s.Queued != uint64(len(keys)) || s.Hits != uint64(len(keys)) || s.Written != 0 {
		t.Fatalf("snapshot %+v: want %d hits from the queue, nothing written", s, len(keys))
	}
	if lookup(b, keys[0], "") != nil {
		t.Fatal("a copy answered from the queue was stored in RAM again: the writer would take it for a successor")
	}
	b.t.Start(t.Context())
	b.stop(t)
	c := open(t, dir, 64<<20, Config{RAM: 1}, false)
	for _, k := range keys {
		if e := fetch(c, k, ""); !bodyIs(e, "new of ", k) {
			t.Fatalf("%s: the copy answered from the queue was not written", k)
		}
	}
}

// A purge handed to the tier after a copy was queued makes it
// unservable, whether the writer applied it yet or not.
func TestPurgeAfterQueueingMakesTheWaitingCopyUnservable(t *testing.T) {
	forget := func(c *cache.Cache) {
		for i := range keepApplied + 1 {
			c.PurgeTag(fmt.Sprintf("s\x00other%d", i), false, 0)
		}
	}
	tests := []struct {
		name  string
		purge func(c *cache.Cache, key string)
		other bool // the purge covers only key
	}{
		{"tag", func(c *cache.Cache, k string) { c.PurgeTag("s\x00"+k, false, 0) }, true},
		{"soft tag", func(c *cache.Cache, k string) { c.PurgeTag("s\x00"+k, true, 0) }, true},
		{"site", func(c *cache.Cache, _ string) { c.PurgeTag("s\x02", false, 0) }, false},
		{"url", func(c *cache.Cache, k string) { c.PurgeKey(c.Hash([]byte(k)), []byte(k), false) }, true},
		{"prefix", func(c *cache.Cache, k string) { c.PurgeKeys(func(s string) bool { return s == k }, true) }, true},
		{"now uncacheable", func(c *cache.Cache, k string) {
			c.MarkPass(c.Hash([]byte(k)), k, time.Now().Add(time.Minute).UnixNano())
		}, true},
		{"forgotten", func(c *cache.Cache, _ string) { forget(c) }, false},
	}
	for _, tt := range tests {
		for _, applied := range []bool{false, true} {
			if tt.name == "forgotten" && !applied {
				continue // purges queued are all checked
			}
			t.Run(fmt.Sprintf("%s/applied=%v", tt.name, applied), func(t *testing.T) {
				n := open(t, t.TempDir(), 256<<10, Config{}, false)
				keys := gone(t, n, "", 40)
				k := keys[0]
				tt.purge(n.c, k)
				if applied {
					n.t.applyPurges()
				}
				if e := fetch(n, k, ""); e != nil && n.c.Status(e, n.c.Now()) != cache.Purged {
					t.Fatalf("%s served from the queue after its purge", k)
				}
				if len(keys) > 1 && tt.other {
					if e := fetch(n, keys[1], ""); !bodyIs(e, "", keys[1]) {
						t.Fatalf("%s, which the purge does not cover, was not served from the queue", keys[1])
					}
				}
			})
		}
	}
}

// A copy stored again while the last one waits replaces it: the queue
// holds one copy per key, the newest, and a full queue drops only new
// keys.
func TestStoreOfAKeyWaitingReplacesItsCopy(t *testing.T) {
	dir := t.TempDir()
	n := open(t, dir, 64<<20, Config{Queue: 2}, false)
	obj := func(k, body string) *cache.Object {
		return &cache.Object{Key: k, Variants: []*cache.Entry{entry("", body, "s\x00"+k)}}
	}
	for _, body := range []string{"1", "2", "3"} {
		n.t.Stored(n.c.Hash([]byte("http://s/a")), obj("http://s/a", body), n.t.Seq())
	}
	n.t.Stored(n.c.Hash([]byte("http://s/b")), obj("http://s/b", "b"), n.t.Seq())
	n.t.Stored(n.c.Hash([]byte("http://s/c")), obj("http://s/c", "c"), n.t.Seq()) // full
	n.t.Stored(n.c.Hash([]byte("http://s/a")), obj("http://s/a", "4"), n.t.Seq())
	if s := n.t.Snapshot(); s.Dropped != 1 {
		t.Fatalf("snapshot %+v: want the third key dropped alone", s)
	}
	if e := fetch(n, "http://s/a", ""); e == nil || string(e.Body) != "4" {
		t.Fatalf("answered %+v, want the newest copy", e)
	}
	n.t.Start(t.Context())
	n.stop(t)
	if s := n.t.Snapshot(); s.Written != 2 {
		t.Fatalf("snapshot %+v: want one file per key", s)
	}
	m := open(t, dir, 64<<20, Config{RAM: 1}, false)
	if e := fetch(m, "http://s/a", ""); e == nil || string(e.Body) != "4" {
		t.Fatalf("file holds %+v, want the newest copy", e)
	}
}

// A copy the writer took stays findable until its file is indexed, and
// a newer one stored meanwhile waits again.
func TestCopyBeingWrittenStaysFindableUntilIndexed(t *testing.T) {
	q := newQueue(4)
	p1 := put{o: &cache.Object{Key: "k"}}
	p2 := put{o: &cache.Object{Key: "k"}}
	q.push(p1)
	got := q.pop(nil, 8)
	if f, ok := q.find([]byte("k")); !ok || f.o != p1.o || len(got) != 1 || got[0].o != p1.o {
		t.Fatal("the copy being written is not findable")
	}
	q.push(p2)
	q.done(p1)
	if f, ok := q.find([]byte("k")); !ok || f.o != p2.o || q.waiting() != 1 {
		t.Fatal("the newer copy stored while the last was written is lost")
	}
	got = q.pop(nil, 8)
	q.done(got[0])
	if _, ok := q.find([]byte("k")); ok || q.waiting() != 0 {
		t.Fatal("a copy indexed is still in the queue")
	}
}
