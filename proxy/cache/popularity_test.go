package cache

import (
	"testing"
	"time"
)

func TestPopularityCountsEveryRequestWhileRare(t *testing.T) {
	var p Popularity
	now := int64(0)
	for range popLinear {
		p.Touch(now)
	}
	if got := p.Score(now); got != popLinear {
		t.Fatalf("score after %d requests: %d", popLinear, got)
	}
	for range 100_000 {
		p.Touch(now)
	}
	if got := p.Score(now); got <= popLinear+50 || got > popMax {
		t.Fatalf("score after 100,032 requests: %d, want logarithmic growth past %d", got, popLinear)
	}
}

func TestPopularityLosesOnePerIdleMinute(t *testing.T) {
	var p Popularity
	now := int64(time.Hour)
	for range 10 {
		p.Touch(now)
	}
	if got := p.Score(now + int64(3*time.Minute)); got != 7 {
		t.Fatalf("score 3 idle minutes after 10 requests: %d, want 7", got)
	}
	if got := p.Score(now + int64(time.Hour)); got != 0 {
		t.Fatalf("score an idle hour later: %d, want 0", got)
	}
	p.Touch(now + int64(5*time.Minute))
	if got := p.Score(now + int64(5*time.Minute)); got != 6 {
		t.Fatalf("a request 5 minutes later: %d, want 10-5+1", got)
	}
}

// A page fetched again takes its earlier copy's rank, and a variant
// refilled keeps its counter.
func TestPopularityFollowsThePage(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	key := "/p"
	h := c.Hash([]byte(key))
	first := testEntry("", 10, time.Hour)
	c.Insert(h, key, VarySpec{}, first)
	for range 5 {
		first.Popularity().Touch(c.Now())
	}
	second := testEntry("", 10, time.Hour)
	c.Insert(h, key, VarySpec{}, second)
	if got := second.Popularity().Score(c.Now()); got != 5 {
		t.Fatalf("the refilled variant's score: %d, want 5", got)
	}
	var again Popularity
	again.Adopt(first.Popularity(), c.Now())
	if got := again.Score(c.Now()); got != 5 {
		t.Fatalf("adopted score: %d, want 5", got)
	}
}

func TestDropObserverSeesWhatPurgesRemoveAtOnce(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	var seen []string
	c.OnDrop(func(_ uint64, o *Object) { seen = append(seen, o.Key) })
	for _, k := range []string{"/a", "/b"} {
		c.Insert(c.Hash([]byte(k)), k, VarySpec{}, testEntry("", 10, time.Hour))
	}
	c.PurgeKey(c.Hash([]byte("/a")), []byte("/a"), false)
	if len(seen) != 1 || seen[0] != "/a" {
		t.Fatalf("after a key purge the observer saw %q", seen)
	}
	c.PurgeAll(false, 0)
	if len(seen) != 2 || seen[1] != "/b" {
		t.Fatalf("after a purge of everything the observer saw %q", seen)
	}
}

func TestInvalidatedSinceNamesOnlyLaterPurges(t *testing.T) {
	c := newTestCache(t, Config{Size: 1 << 20})
	e := testEntry("", 10, time.Hour)
	e.Tags = []string{"t"}
	c.Insert(c.Hash([]byte("/t")), "/t", VarySpec{}, e)
	before := c.Now()
	if c.InvalidatedSince(e, before) {
		t.Fatal("invalidated before any purge")
	}
	c.PurgeTag("t", true, 0)
	if !c.InvalidatedSince(e, before) {
		t.Fatal("a soft purge of its tag since then is not seen")
	}
	if c.InvalidatedSince(e, c.Now()+1) {
		t.Fatal("the purge is seen as one after it")
	}
}

// BenchmarkPopularityTouch is what a hit pays to be counted: a hot
// page's counter (past popLinear, rarely written) from every core.
func BenchmarkPopularityTouch(b *testing.B) {
	var p Popularity
	now := time.Now().UnixNano()
	for range 10_000 {
		p.Touch(now)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p.Touch(now)
		}
	})
}
