package main

import (
	"context"
	"sync"
	"time"
)

// A node's RSS is judged round by round. Under this load it swings with
// each round of disruptions, not only with each GC cycle: on node A (a
// 200-s run, /metrics read every 2 s) the heap goal fell from about 40 to
// 25 MB once a round and climbed back (three of its five falls came at
// the reads where a fan-out gap while the origin was down left a quarter
// fewer files in the disk tier, 3,440 → 2,600, fetched again after); RSS
// followed at the scavenger's pace, between 58 and 68 MB. The live heap of heap profiles
// at the baseline and at the end was the same (13.11 and 13.07 MB), and
// goroutines and descriptors did not grow: no leak. One read, or the
// highest of five within 5 s, lands anywhere in that swing: two
// 10-minute runs of one build read 63.6 → 63.6 and 61.2 → 67.8 MB. What
// an operator provisions for is the peak, and what a leak raises is the
// peak of every round after it; so each node's RSS is read every rssEvery
// under load, each round's peak is kept, and the median peak of the last
// judgedRounds rounds may not exceed that of the first (after the
// warm-up round, when the caches are full) by more than 10 %. Node B with
// the disk tier is judged the same way across its processes (a round
// upgrades and restarts it): a round's peak is that of whichever ran.

// rssEvery is how often each node's RSS is read under load.
const rssEvery = time.Second

// judgedRounds is how many rounds at each end of the run are compared
// (fewer when the run has fewer than three times as many).
const judgedRounds = 3

// rssBound is the growth allowed from the first rounds' peak to the last.
const rssBound = 1.10

type rssRead struct {
	at time.Time
	kB int64
}

// rssTrack is each node's RSS, read under load, and when each round of
// disruptions ended (the warm-up round's end first).
type rssTrack struct {
	mu     sync.Mutex
	reads  [2][]rssRead
	rounds []time.Time
}

func (t *rssTrack) roundEnded(at time.Time) {
	t.mu.Lock()
	t.rounds = append(t.rounds, at)
	t.mu.Unlock()
}

// follow reads each node's RSS every rssEvery until ctx ends; a node
// that is down (a restart) reads 0 and is skipped.
func (t *rssTrack) follow(ctx context.Context, nodes [2]*node) {
	tick := time.NewTicker(rssEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			for i, n := range nodes {
				if kB := rss(int(n.pid.Load())); kB > 0 {
					t.mu.Lock()
					t.reads[i] = append(t.reads[i], rssRead{now, kB})
					t.mu.Unlock()
				}
			}
		}
	}
}

// peaks is node i's highest read in each round after the warm-up one.
func (t *rssTrack) peaks(i int) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return roundPeaks(t.reads[i], t.rounds)
}

// roundPeaks is the highest read between each two successive round ends;
// a round without a read (the node was down throughout) has none.
func roundPeaks(reads []rssRead, ends []time.Time) []int64 {
	var out []int64
	for r := 1; r < len(ends); r++ {
		var peak int64
		for _, x := range reads {
			if !x.at.Before(ends[r-1]) && x.at.Before(ends[r]) {
				peak = max(peak, x.kB)
			}
		}
		if peak > 0 {
			out = append(out, peak)
		}
	}
	return out
}

// rssGrowth is the median peak of the first k rounds and of the last k
// (k is judgedRounds, or a third of the rounds if that is fewer, at least
// one); ok is false with fewer than two rounds: nothing to compare.
func rssGrowth(peaks []int64) (first, last int64, k int, ok bool) {
	n := len(peaks)
	if n < 2 {
		return 0, 0, 0, false
	}
	k = max(min(judgedRounds, n/3), 1)
	return medianOf(peaks[:k]), medianOf(peaks[n-k:]), k, true
}

// rssGrew reports whether last is past the bound from first.
func rssGrew(first, last int64) bool { return float64(last) > rssBound*float64(first) }
