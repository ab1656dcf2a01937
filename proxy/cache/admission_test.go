package cache

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// lsVary is LSCache's vary cookie as the proxy keys it: each value
// followed by a NUL, so the plain variant is "\x00".
var lsVary = VarySpec{Cookies: []string{"_lscache_vary"}}

// ask is one request for variant v of /a: a lookup, and an insert of
// what the origin answered when it missed. It reports whether v is stored
// afterwards.
func ask(c *Cache, clk *fakeClock, v string) bool {
	h := c.Hash([]byte("/a"))
	if o := c.Lookup(h, []byte("/a")); o != nil && o.Variant([]byte(v)) != nil {
		return true
	}
	e := clk.entry(time.Hour)
	e.Variant = v
	c.Insert(h, "/a", lsVary, e)
	o := c.Lookup(h, []byte("/a"))
	return o != nil && slices.Contains(variants(o), v)
}

// 1,000 made-up values of the vary cookie, each asked for once, push out
// neither the plain variant nor one that visitors use, whatever came first.
func TestMadeUpVariantsEvictNeitherThePlainNorAPopularOne(t *testing.T) {
	for _, order := range []string{"flood after", "flood before"} {
		t.Run(order, func(t *testing.T) {
			clk := newFakeClock()
			c := newTestCache(t, Config{Size: 64 << 20, Clock: clk.Now})
			flood := func(from int) {
				for i := range 1000 {
					ask(c, clk, fmt.Sprintf("made-up-%d\x00", from+i))
				}
			}
			if order == "flood before" {
				flood(0)
			}
			for range 5 {
				ask(c, clk, "\x00")
				ask(c, clk, "commenter\x00")
			}
			flood(1000)
			for _, v := range []string{"\x00", "commenter\x00"} {
				o := c.Lookup(c.Hash([]byte("/a")), []byte("/a"))
				if o.Variant([]byte(v)) == nil {
					t.Errorf("variant %q pushed out by made-up ones; %d kept", v, len(o.Variants))
				}
			}
		})
	}
}

// A variant asked for again while made-up values arrive gets in, in
// place of a made-up one; past the half-life, what was popular long ago
// gives way too.
func TestAVariantAskedForAgainGetsIn(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 64 << 20, Clock: clk.Now, MaxVariants: 4})
	for _, v := range []string{"a\x00", "b\x00", "c\x00", "d\x00"} {
		for range 20 {
			ask(c, clk, v)
		}
	}
	in := false
	for i := range 10 {
		ask(c, clk, fmt.Sprintf("made-up-%d\x00", i))
		in = ask(c, clk, "new\x00")
	}
	if in {
		t.Fatal("a newcomer asked for 10 times displaced variants asked for 20 times")
	}
	clk.Advance(5 * time.Duration(halfLife))
	for range 3 {
		in = ask(c, clk, "new\x00")
	}
	if !in {
		t.Fatalf("after 5 half-lives a newcomer asked for 3 times is still refused; kept %q",
			variants(c.Lookup(c.Hash([]byte("/a")), []byte("/a"))))
	}
}

// Counts halve for the variants a full object keeps even while every
// newcomer is refused: the refused insert stores nothing.
func TestAgingReachesKeptVariantsWhileNewcomersAreRefused(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 64 << 20, Clock: clk.Now, MaxVariants: 2})
	for _, v := range []string{"a\x00", "b\x00"} {
		for range 4 {
			ask(c, clk, v)
		}
	}
	clk.Advance(time.Duration(halfLife))
	if ask(c, clk, "x\x00") { // 1 against 4/2
		t.Fatal("x admitted against variants used twice as often")
	}
	clk.Advance(time.Duration(halfLife))
	ask(c, clk, "x\x00") // 1/2+1 = 1 against 4/2/2 = 1: refused
	if !ask(c, clk, "x\x00") {
		t.Fatalf("x asked for twice in a half-life refused against variants used once; kept %q",
			variants(c.Lookup(c.Hash([]byte("/a")), []byte("/a"))))
	}
}

func TestPlainVariantIsOneNULPerSelectingValue(t *testing.T) {
	spec := VarySpec{Headers: []string{"accept-language"}, Cookies: []string{"_lscache_vary"}}
	for v, want := range map[string]bool{"\x00\x00": true, "\x00": false, "\x00\x00\x00": false, "de\x00\x00": false, "\x00x\x00": false} {
		if got := plainVariant(v, &spec); got != want {
			t.Errorf("plainVariant(%q) = %v, want %v", v, got, want)
		}
	}
}
