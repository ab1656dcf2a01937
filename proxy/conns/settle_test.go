package conns

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestMemoryIsGivenBackWhenManyMoreConnectionsAreParked(t *testing.T) {
	var released atomic.Int32
	var idle int
	p := &settler{idle: func() int { return idle }, releaseStep: 8, release: func() { released.Add(1) }}
	now := time.Unix(1000, 0)
	steps := []struct {
		parked int
		later  time.Duration // after the previous look
		want   int32         // releases so far
	}{
		{5, settleEvery, 0},
		{8, settleEvery, 0},      // 8 more than none, but 3 of them since the last look: still coming
		{9, settleEvery, 1},      // the burst is over
		{20, settleEvery / 2, 1}, // the poller looked less than a settleEvery ago
		{12, settleEvery / 2, 1}, // 3 more than at the release
		{3, settleEvery, 1},      // fewer: the low for the next one
		{10, settleEvery, 1},
		{11, settleEvery, 2},      // 8 more than the low, and settled
		{11, 10 * settleEvery, 2}, // no more parked: nothing new to give back
		{30, settleEvery, 2},
		{31, settleEvery, 3},
		{31, 10 * settleEvery, 3},
	}
	for i, s := range steps {
		idle = s.parked
		now = now.Add(s.later)
		p.settle(now)
		p.releases.Wait()
		if got := released.Load(); got != s.want {
			t.Fatalf("step %d (%d parked): %d releases, want %d", i, s.parked, got, s.want)
		}
	}
}
