package cache

import (
	"testing"
	"time"
)

// lowerRec records what a lower tier is told; keeps makes it a GapKeeper.
type lowerRec struct {
	purges []Purge
	gaps   [][2]int64
}

func (l *lowerRec) Stored(uint64, *Object, uint64) {}
func (l *lowerRec) Purged(p Purge)                 { l.purges = append(l.purges, p) }
func (l *lowerRec) Seq() uint64                    { return 0 }

type gapKeeperRec struct{ lowerRec }

func (l *gapKeeperRec) Gap(at, until int64) { l.gaps = append(l.gaps, [2]int64{at, until}) }

// gappedOver is a cache over l holding an entry of before a gap of grace.
func gappedOver(t *testing.T, l Lower, grace time.Duration) (*Cache, *fakeClock, *Entry) {
	t.Helper()
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	c.SetLower(l)
	e := clk.entry(time.Hour)
	insert(c, "/a", VarySpec{}, e)
	clk.Advance(time.Millisecond)
	c.MarkGap(grace)
	return c, clk, e
}

func TestGapIsKeptByALowerTierThatKeepsGaps(t *testing.T) {
	l := &gapKeeperRec{}
	c, _, e := gappedOver(t, l, 10*time.Second)
	if len(l.purges) != 0 || len(l.gaps) != 1 || l.gaps[0] != [2]int64{c.Now(), c.Now() + int64(10*time.Second)} {
		t.Fatalf("purges %d, gaps %v: want the gap's mark and no purge", len(l.purges), l.gaps)
	}
	if c.Invalidated(e) {
		t.Fatal("an entry only a gap left stale is invalidated within the grace: the tier would drop it")
	}
	c.PurgeAll(true, 0)
	if !c.Invalidated(e) {
		t.Fatal("a soft purge after the gap does not invalidate the entry")
	}
}

func TestGapEndsAfterItsGraceForTheLowerTier(t *testing.T) {
	c, clk, e := gappedOver(t, &gapKeeperRec{}, time.Second)
	clk.Advance(time.Second)
	if !c.Invalidated(e) {
		t.Fatal("an entry of before the gap is kept after the grace")
	}
}

func TestGapPurgesALowerTierThatKeepsNoGaps(t *testing.T) {
	l := &lowerRec{}
	c, _, e := gappedOver(t, l, 10*time.Second)
	if len(l.purges) != 1 || l.purges[0].At != c.Now() || !l.purges[0].Key("any") {
		t.Fatalf("purges %+v: want everything up to the gap", l.purges)
	}
	if !c.Invalidated(e) {
		t.Fatal("a tier that keeps no gaps is told to keep a gapped entry")
	}
}

func TestRestoredGapKeepsItsDeadline(t *testing.T) {
	clk := newFakeClock()
	c := newTestCache(t, Config{Size: 1 << 20, Clock: clk.Now})
	e := clk.entry(time.Hour)
	clk.Advance(time.Millisecond)
	c.RestoreGap(c.Now(), c.Now()+int64(time.Second))
	if got := c.Status(e, c.Now()); got != Stale || !c.Gapped(e) {
		t.Fatalf("within the restored grace: %v, gapped %v; want Stale because of the gap", got, c.Gapped(e))
	}
	clk.Advance(time.Second)
	if got := c.Status(e, c.Now()); got != Purged {
		t.Fatalf("at the restored deadline: %v, want Purged", got)
	}
	old := clk.entry(time.Hour)
	clk.Advance(time.Millisecond)
	c.RestoreGap(c.Now()-1, c.Now()-1) // a mark whose grace ran out while the node was down
	if got := c.Status(old, c.Now()); got != Purged {
		t.Fatalf("after a restored grace that ran out: %v, want Purged", got)
	}
}
