package cache

import (
	"testing"
	"time"
)

func TestGapMakesEntriesStaleThenGoneAfterTheGrace(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	e := clk.entry(time.Hour)
	insert(c, "/a", VarySpec{}, e)
	clk.Advance(time.Millisecond)
	if n := c.MarkGap(10 * time.Second); n != 1 {
		t.Fatalf("MarkGap counted %d objects, want 1", n)
	}
	if got := c.Status(e, c.Now()); got != Stale {
		t.Fatalf("right after the gap: %v, want Stale", got)
	}
	if !c.Gapped(e) {
		t.Fatal("entry filled before the gap is not reported as gapped")
	}
	clk.Advance(9 * time.Second)
	if got := c.Status(e, c.Now()); got != Stale {
		t.Fatalf("within the grace: %v, want Stale", got)
	}
	clk.Advance(time.Second)
	if got := c.Status(e, c.Now()); got != Purged {
		t.Fatalf("at the end of the grace: %v, want Purged", got)
	}
}

func TestEntryFilledAfterAGapIsFresh(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	c.MarkGap(time.Second)
	clk.Advance(time.Millisecond)
	e := clk.entry(time.Hour) // the refresh
	insert(c, "/a", VarySpec{}, e)
	clk.Advance(time.Minute)
	if got := c.Status(e, c.Now()); got != Fresh {
		t.Fatalf("entry filled after the gap: %v, want Fresh", got)
	}
	if c.Gapped(e) {
		t.Fatal("entry filled after the gap is reported as gapped")
	}
}

func TestASecondGapKeepsTheFirstDeadline(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	old := clk.entry(time.Hour)
	insert(c, "/old", VarySpec{}, old)
	clk.Advance(time.Millisecond)
	c.MarkGap(10 * time.Second)
	clk.Advance(5 * time.Second)
	c.MarkGap(10 * time.Second) // the first one's entries may not gain 5 s
	clk.Advance(5 * time.Second)
	if got := c.Status(old, c.Now()); got != Purged {
		t.Fatalf("entry of the first gap after its grace: %v, want Purged", got)
	}
}

func TestAGapWhoseGraceEndedStaysHardAfterTheNextOne(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	old := clk.entry(time.Hour)
	insert(c, "/old", VarySpec{}, old)
	clk.Advance(time.Millisecond)
	c.MarkGap(time.Second)
	clk.Advance(time.Minute)
	mid := clk.entry(time.Hour)
	insert(c, "/mid", VarySpec{}, mid)
	clk.Advance(time.Millisecond)
	c.MarkGap(time.Second)
	if got := c.Status(old, c.Now()); got != Purged {
		t.Fatalf("entry of the expired first gap: %v, want Purged", got)
	}
	if got := c.Status(mid, c.Now()); got != Stale {
		t.Fatalf("entry of the second gap within its grace: %v, want Stale", got)
	}
}

// A page filled between two gaps (the first one's warm-up refreshed it)
// may have missed only the second one's purges: it gets the second
// one's grace, not what is left of the first one's.
func TestAPageRefreshedBetweenTwoGapsGetsTheSecondGrace(t *testing.T) {
	for _, restored := range []bool{false, true} {
		clk := newFakeClock()
		c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
		old := clk.entry(time.Hour)
		clk.Advance(time.Millisecond)
		at1 := c.Now()
		if !restored {
			c.MarkGap(10 * time.Second)
		}
		clk.Advance(9 * time.Second)
		mid := clk.entry(time.Hour) // the refresh
		clk.Advance(time.Millisecond)
		at2 := c.Now()
		if restored { // as a restart reads them back, the later first
			c.RestoreGap(at2, at2+int64(10*time.Second))
			c.RestoreGap(at1, at1+int64(10*time.Second))
		} else {
			c.MarkGap(10 * time.Second)
		}
		clk.Advance(time.Second)
		if got := c.Status(old, c.Now()); got != Purged {
			t.Fatalf("restored %v: the first gap's page after its grace: %v, want Purged", restored, got)
		}
		if got := c.Status(mid, c.Now()); got != Stale {
			t.Fatalf("restored %v: the page refreshed between the gaps, after the first grace: %v, want Stale", restored, got)
		}
		clk.Advance(9 * time.Second)
		if got := c.Status(mid, c.Now()); got != Purged {
			t.Fatalf("restored %v: the page refreshed between the gaps after the second grace: %v, want Purged", restored, got)
		}
	}
}

// Three gaps within one grace: the two earlier ones merge (the later
// mark, the earlier deadline), never loosening a deadline.
func TestThreeGapsNeverLoosenADeadline(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	var pages []*Entry
	for range 3 {
		pages = append(pages, clk.entry(time.Hour))
		clk.Advance(time.Millisecond)
		c.MarkGap(10 * time.Second)
		clk.Advance(3 * time.Second)
	}
	clk.Advance(time.Second) // 10 s after the first gap
	for i, e := range pages[:2] {
		if got := c.Status(e, c.Now()); got != Purged {
			t.Fatalf("page %d after the first grace: %v, want Purged", i, got)
		}
	}
	if got := c.Status(pages[2], c.Now()); got != Stale {
		t.Fatalf("the last gap's page: %v, want Stale", got)
	}
}
