package sitestats

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// counter is a site's counters as a test drives them.
type counter struct{ hits, misses atomic.Uint64 }

func (c *counter) read() Counts {
	h, m := c.hits.Load(), c.misses.Load()
	return Counts{Requests: h + m, Hits: h, Misses: m}
}

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// Traffic at a steady rate, sampled every second: each window counts
// what came within it, to its step.
func TestWindowsCountWhatCameWithinThem(t *testing.T) {
	var c counter
	s := New(Config{}, c.read, t0)
	// 25 h of one hit a second, sampled once a second.
	now := t0
	for range 25 * 3600 {
		now = now.Add(time.Second)
		c.hits.Add(1)
		s.Sample(now)
	}
	tests := []struct {
		w        Window
		min, max uint64
	}{
		{Minute, 60, 60},
		{Hour, 3600, 3600},
		{Day, 86400, 86400},
	}
	for _, tt := range tests {
		got := s.Over(tt.w, now).Hits
		if got < tt.min || got > tt.max {
			t.Errorf("window %d: %d hits, want %d..%d", tt.w, got, tt.min, tt.max)
		}
	}
	if got := s.Totals().Hits; got != 25*3600 {
		t.Errorf("totals: %d hits, want %d", got, 25*3600)
	}
}

// A site younger than a window counts everything since it was born, and
// the windows read the counters live, between samples too.
func TestAYoungSiteCountsSinceItsBirth(t *testing.T) {
	var c counter
	c.hits.Add(7) // counted before the site's history began
	s := New(Config{}, c.read, t0)
	c.hits.Add(3)
	c.misses.Add(1)
	for _, w := range []Window{Minute, Hour, Day} {
		got := s.Over(w, t0.Add(2*time.Second))
		if got.Hits != 3 || got.Misses != 1 || got.Requests != 4 {
			t.Errorf("window %d: %+v, want 3 hits, 1 miss, 4 requests", w, got)
		}
		if r := got.HitRatio(); r != 0.75 {
			t.Errorf("window %d: hit ratio %v, want 0.75", w, r)
		}
	}
}

// Without samples for a while (no sampler tick, or a quiet site), a
// window starts at the newest snapshot old enough, so counts from before
// the window are left out.
func TestAWindowStartsAtItsNewestOldEnoughSnapshot(t *testing.T) {
	var c counter
	s := New(Config{}, c.read, t0)
	c.hits.Add(100)
	s.Sample(t0.Add(10 * time.Second))
	c.hits.Add(5)
	now := t0.Add(75 * time.Second) // the t0+10 s snapshot is 65 s old
	if got := s.Over(Minute, now).Hits; got != 5 {
		t.Errorf("minute: %d hits, want the 5 after the snapshot 65 s ago", got)
	}
	if got := s.Over(Hour, now).Hits; got != 105 {
		t.Errorf("hour: %d hits, want 105", got)
	}
}

// A clock that steps back does not reorder the ring.
func TestAClockSteppingBackKeepsTheRingInOrder(t *testing.T) {
	var c counter
	s := New(Config{}, c.read, t0)
	c.hits.Add(1)
	s.Sample(t0.Add(-time.Hour))
	c.hits.Add(1)
	if got := s.Over(Minute, t0.Add(time.Second)).Hits; got != 2 {
		t.Errorf("minute: %d hits, want 2", got)
	}
}

func TestUncachedURLsAreListedMostRequestedFirstWithTheirReason(t *testing.T) {
	s := New(Config{TopURLs: 3}, (&counter{}).read, t0)
	add := func(uri, reason string, n int) {
		for range n {
			s.Uncached([]byte("http://"), []byte("a.test"), []byte(uri), []byte(reason), t0)
		}
	}
	add("/cart", "set-cookie", 5)
	add("/account", "private", 3)
	add("/search?q=x", "no-ttl", 1)
	add("/cart", "bypass", 1) // the latest reason is the one listed
	got := s.URLs(t0)
	want := []URL{
		{URL: "http://a.test/cart", Reason: "bypass", Count: 6, Last: t0.Unix()},
		{URL: "http://a.test/account", Reason: "private", Count: 3, Last: t0.Unix()},
		{URL: "http://a.test/search?q=x", Reason: "no-ttl", Count: 1, Last: t0.Unix()},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("URLs:\n got %+v\nwant %+v", got, want)
	}
}

// A full list keeps its bound: a new URL takes the least counted one's
// place and count (Space-Saving), and a URL requested more than the
// list's least count stays listed whatever else comes.
func TestTheURLListStaysBounded(t *testing.T) {
	s := New(Config{TopURLs: 4}, (&counter{}).read, t0)
	for i := range 1000 {
		s.Uncached([]byte("http://"), []byte("a.test"), []byte("/hot"), []byte("set-cookie"), t0)
		s.Uncached([]byte("http://"), []byte("a.test"), []byte(fmt.Sprintf("/scan/%d", i)), []byte("no-ttl"), t0)
	}
	got := s.URLs(t0)
	if len(got) != 4 {
		t.Fatalf("%d URLs listed, want the bound 4: %+v", len(got), got)
	}
	if got[0].URL != "http://a.test/hot" || got[0].Count != 1000 || got[0].Over != 0 {
		t.Errorf("first URL %+v, want /hot counted exactly 1000 times", got[0])
	}
	if len(s.urls.items) != 4 || len(s.urls.h) != 4 {
		t.Errorf("index holds %d URLs and heap %d, want 4", len(s.urls.items), len(s.urls.h))
	}
	s.Resize(Config{TopURLs: 1})
	if got := s.URLs(t0); len(got) != 1 || got[0].URL != "http://a.test/hot" {
		t.Errorf("after resizing to 1: %+v, want /hot alone", got)
	}
	s.Resize(Config{TopURLs: 0})
	s.Uncached([]byte("http://"), []byte("a.test"), []byte("/x"), []byte("no-ttl"), t0)
	if got := s.URLs(t0); len(got) != 0 {
		t.Errorf("with top_urls 0: %+v, want none", got)
	}
}

// A URL longer than MaxURLLen is kept cut, and URLs not seen for a day
// are no longer listed.
func TestLongAndOldURLs(t *testing.T) {
	s := New(Config{TopURLs: 10}, (&counter{}).read, t0)
	long := make([]byte, 2*MaxURLLen)
	for i := range long {
		long[i] = 'a'
	}
	s.Uncached([]byte("http://"), []byte("a.test"), long, []byte("no-ttl"), t0)
	s.Uncached([]byte("http://"), []byte("a.test"), []byte("/later"), []byte("no-ttl"), t0.Add(2*time.Hour))
	got := s.URLs(t0.Add(25 * time.Hour))
	if len(got) != 1 || got[0].URL != "http://a.test/later" {
		t.Fatalf("a day after the long URL: %+v, want /later alone", got)
	}
	got = s.URLs(t0.Add(time.Hour))
	if len(got) != 2 || len(got[1].URL) != MaxURLLen {
		t.Fatalf("URLs %+v, want 2 with the long one cut to %d bytes", got, MaxURLLen)
	}
}

// Counting a URL already listed allocates nothing.
func TestCountingAListedURLAllocatesNothing(t *testing.T) {
	s := New(Config{TopURLs: 10}, (&counter{}).read, t0)
	scheme, host, uri, reason := []byte("http://"), []byte("a.test"), []byte("/cart"), []byte("set-cookie")
	s.Uncached(scheme, host, uri, reason, t0)
	if n := testing.AllocsPerRun(100, func() { s.Uncached(scheme, host, uri, reason, t0) }); n != 0 {
		t.Errorf("%v allocations per count, want 0", n)
	}
}

// A flood of URLs the WAF stopped, which costs a client nothing
// upstream, leaves the uncached URLs listed, and they come first.
func TestAFloodOfAttacksKeepsTheUncachedURLs(t *testing.T) {
	s := New(Config{TopURLs: 3}, (&counter{}).read, t0)
	for range 2 {
		for _, uri := range []string{"/cart", "/account", "/search"} {
			s.Uncached([]byte("http://"), []byte("a.test"), []byte(uri), []byte("set-cookie"), t0)
		}
	}
	for i := range 1000 {
		s.Uncached([]byte("http://"), []byte("a.test"), []byte(fmt.Sprintf("/?id=%d'+OR+1=1", i)), []byte(ReasonWAF), t0)
	}
	got := s.URLs(t0)
	if len(got) != 6 {
		t.Fatalf("%d URLs listed, want 3 uncached and 3 stopped: %+v", len(got), got)
	}
	for i, u := range got {
		if stopped := u.Reason == ReasonWAF; stopped != (i >= 3) {
			t.Errorf("URL %d: %+v, want the 3 uncached ones first, then the WAF's", i, u)
		}
	}
}
