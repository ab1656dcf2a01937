package main

import (
	"testing"
	"time"
)

// series reads one value per second, rounds of 20 s: value(round, second).
func series(rounds int, value func(r, sec int) int64) ([]rssRead, []time.Time) {
	t0 := time.Unix(1000, 0)
	var reads []rssRead
	var ends []time.Time
	for r := 0; r <= rounds; r++ {
		ends = append(ends, t0.Add(time.Duration(r*20)*time.Second))
		if r == rounds {
			break
		}
		for sec := range 20 {
			reads = append(reads, rssRead{t0.Add(time.Duration(r*20+sec) * time.Second), value(r, sec)})
		}
	}
	return reads, ends
}

// A node whose RSS swings by 15 % within every round (a gap drops the
// caches, the refresh fills them) is flat: one read at the wrong moment
// of the swing was judged as growth before.
func TestRSSSwingingWithinEachRoundIsFlat(t *testing.T) {
	reads, ends := series(25, func(r, sec int) int64 {
		if sec < 8 {
			return 58000 + int64(r%3)*500 // the dip after a gap
		}
		return 67000 + int64(r%2)*800
	})
	first, last, k, ok := rssGrowth(roundPeaks(reads, ends))
	if !ok || k != judgedRounds {
		t.Fatalf("rssGrowth: ok %v, k %d; want a judgement over %d rounds", ok, k, judgedRounds)
	}
	if rssGrew(first, last) {
		t.Fatalf("flat RSS judged as grown: %d → %d kB", first, last)
	}
	// The old judgement: a read in the dip against one at the peak.
	if !rssGrew(reads[20].kB, reads[len(reads)-1].kB) {
		t.Fatalf("the series does not swing past the bound (%d → %d): the test proves nothing", reads[20].kB, reads[len(reads)-1].kB)
	}
}

// A leak raises every round's peak: 1 % a round is 25 % over the run.
func TestRSSGrowingRoundAfterRoundFails(t *testing.T) {
	reads, ends := series(25, func(r, sec int) int64 {
		return (60000 + int64(sec%5)*1000) * (100 + int64(r)) / 100
	})
	first, last, _, ok := rssGrowth(roundPeaks(reads, ends))
	if !ok || !rssGrew(first, last) {
		t.Fatalf("a leak of 1 %% a round passed: %d → %d kB (ok %v)", first, last, ok)
	}
}

// One round whose peak stands out (an upgrade's two processes read as
// one node's, a burst) does not decide either way.
func TestRSSOneOutlyingRoundDoesNotDecide(t *testing.T) {
	reads, ends := series(12, func(r, sec int) int64 {
		if r == 11 && sec == 10 {
			return 90000
		}
		return 60000
	})
	if first, last, _, _ := rssGrowth(roundPeaks(reads, ends)); rssGrew(first, last) {
		t.Fatalf("one outlying round failed the run: %d → %d kB", first, last)
	}
}

// A round without a read (the node down throughout) has no peak, and a
// run with fewer than two rounds after the first is not judged.
func TestRSSRoundsWithoutReadsAreSkipped(t *testing.T) {
	reads, ends := series(4, func(r, sec int) int64 { return 50000 })
	reads = reads[:20] // reads in round 0 only
	if p := roundPeaks(reads, ends); len(p) != 1 {
		t.Fatalf("roundPeaks = %v, want one peak", p)
	}
	if _, _, _, ok := rssGrowth([]int64{50000}); ok {
		t.Fatal("one round judged")
	}
}
