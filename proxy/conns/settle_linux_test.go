package conns

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestMemoryIsGivenBackWhenManyMoreConnectionsAreParked(t *testing.T) {
	var released atomic.Int32
	p := &lot{byFD: make(map[int32]*Conn), settler: settler{releaseStep: 8, release: func() { released.Add(1) }}}
	now := time.Unix(1000, 0)
	steps := []struct {
		parked int
		later  time.Duration // after the previous look
		want   int32         // releases so far
	}{
		{5, sweep, 0},
		{8, sweep, 0},      // 8 more than none, but 3 of them since the last look: still coming
		{9, sweep, 1},      // the burst is over
		{20, sweep / 2, 1}, // the poller looked less than a sweep ago
		{12, sweep / 2, 1}, // 3 more than at the release
		{3, sweep, 1},      // fewer: the low for the next one
		{10, sweep, 1},
		{11, sweep, 2},      // 8 more than the low, and settled
		{11, 10 * sweep, 2}, // no more parked: nothing new to give back
		{30, sweep, 2},
		{31, sweep, 3},
		{31, 10 * sweep, 3},
	}
	for i, s := range steps {
		p.byFD = make(map[int32]*Conn, s.parked)
		for fd := range s.parked {
			p.byFD[int32(fd)] = nil
		}
		now = now.Add(s.later)
		p.settle(now)
		p.releases.Wait()
		if got := released.Load(); got != s.want {
			t.Fatalf("step %d (%d parked): %d releases, want %d", i, s.parked, got, s.want)
		}
	}
}
