package cache

import (
	"fmt"
	"testing"
	"time"
)

// recount is what the tallies should read: every stored variant that
// names them, counted by walking the store.
func recount(c *Cache) map[*Tally][2]int64 {
	c.store.c.CleanUp()
	m := map[*Tally][2]int64{}
	for _, o := range c.store.c.All() {
		for _, e := range o.Variants {
			if e.Tally != nil {
				v := m[e.Tally]
				m[e.Tally] = [2]int64{v[0] + 1, v[1] + int64(e.Size())}
			}
		}
	}
	return m
}

func checkTallies(t *testing.T, c *Cache, what string, tallies ...*Tally) {
	t.Helper()
	want := recount(c)
	for i, tl := range tallies {
		if got := [2]int64{tl.Entries(), tl.Bytes()}; got != want[tl] {
			t.Errorf("%s: tally %d reads %d entries / %d bytes, the store holds %d / %d",
				what, i, got[0], got[1], want[tl][0], want[tl][1])
		}
	}
}

func TestTallyFollowsTheStore(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now, MaxVariants: 2})
	a, b := &Tally{}, &Tally{}
	entry := func(tl *Tally, variant string, body int, life time.Duration) *Entry {
		e := clk.entry(life)
		e.Variant, e.Body, e.Tally, e.Tags = variant, sharedBody[:body], tl, []string{"t"}
		return e
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"insert", func() {
			for i := range 5 {
				insert(c, fmt.Sprint("/a/", i), VarySpec{}, entry(a, "", 1000, time.Hour))
				insert(c, fmt.Sprint("/b/", i), VarySpec{}, entry(b, "", 2000, time.Hour))
			}
		}},
		{"variants replace and past the cap", func() {
			for _, v := range []string{"gzip", "br", "identity", "br"} {
				insert(c, "/a/v", aeVary, entry(a, v, 500+len(v), time.Hour))
			}
		}},
		{"same key replaced", func() { insert(c, "/b/0", VarySpec{}, entry(b, "", 100, time.Hour)) }},
		{"soft purge", func() { c.PurgeKey(c.Hash([]byte("/a/1")), []byte("/a/1"), true) }},
		{"hard purge", func() { c.PurgeKey(c.Hash([]byte("/b/1")), []byte("/b/1"), false) }},
		{"remove", func() { c.Remove(c.Hash([]byte("/a/2")), []byte("/a/2")) }},
		{"pass replaces variants", func() { c.MarkPass(c.Hash([]byte("/a/3")), "/a/3", clk.Now()+int64(time.Minute)) }},
		{"prefix purge", func() { c.PurgeKeys(func(k string) bool { return k == "/b/2" || k == "/b/3" }, false) }},
		{"expiry", func() {
			insert(c, "/a/short", VarySpec{}, entry(a, "", 300, time.Second))
			clk.Advance(2 * time.Second)
			c.Lookup(c.Hash([]byte("/a/short")), []byte("/a/short"))
		}},
		{"eviction by shrinking", func() {
			for i := range 200 {
				insert(c, fmt.Sprint("/b/big/", i), VarySpec{}, entry(b, "", 20<<10, time.Hour))
			}
			if err := c.Resize(256 << 10); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, s := range steps {
		s.do()
		checkTallies(t, c, "after "+s.name, a, b)
	}
	if a.Entries() == 0 && b.Entries() == 0 {
		t.Fatal("every entry gone: the steps test nothing")
	}
}
