package conns

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestMemoryIsGivenBackWhenManyMoreConnectionsAreParked(t *testing.T) {
	var released atomic.Int32
	var idle int
	p := &settler{idle: func() int { return idle }, goroutines: func() int { return 100 }, releaseStep: 8,
		release: func() { released.Add(1) }}
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
		if p.settle(now) {
			p.run()
		}
		if got := released.Load(); got != s.want {
			t.Fatalf("step %d (%d parked): %d releases, want %d", i, s.parked, got, s.want)
		}
	}
}

// TestMemoryIsGivenBackAgainWhenTheBurstsWorkersEnd: after a release,
// a quarter of releaseStep fewer goroutines (the workers a burst left
// idle, ended by their pool) is worth another; before any release it is
// not, nor while connections keep coming.
func TestMemoryIsGivenBackAgainWhenTheBurstsWorkersEnd(t *testing.T) {
	var released atomic.Int32
	idle, goroutines := 0, 0
	p := &settler{idle: func() int { return idle }, goroutines: func() int { return goroutines }, releaseStep: 8,
		release: func() { released.Add(1) }}
	now := time.Unix(1000, 0)
	steps := []struct {
		idle, goroutines int
		want             int32 // releases so far
	}{
		{0, 50, 0},
		{0, 40, 0},  // 10 fewer goroutines, but no release yet to follow
		{9, 60, 0},  // a burst, still coming
		{9, 60, 1},  // over
		{9, 59, 1},  // 1 fewer
		{9, 58, 2},  // 2 fewer than at the release: its workers ended
		{9, 57, 2},  // 1 fewer than at the last
		{9, 40, 2},  // one such release per burst
		{20, 40, 2}, // a burst coming: goroutines ended meanwhile count after it
		{20, 40, 3},
	}
	for i, s := range steps {
		idle, goroutines = s.idle, s.goroutines
		now = now.Add(settleEvery)
		if p.settle(now) {
			p.run()
		}
		if got := released.Load(); got != s.want {
			t.Fatalf("step %d (%d idle, %d goroutines): %d releases, want %d", i, s.idle, s.goroutines, got, s.want)
		}
	}
}

// TestClosingTheListenerWaitsForTheReleaseItsPollerStarted: a release
// (a GC and giving memory back) runs on a goroutine the listener's lot
// owns; Close returns only after it ended.
func TestClosingTheListenerWaitsForTheReleaseItsPollerStarted(t *testing.T) {
	started, unblock := make(chan struct{}), make(chan struct{})
	var ended atomic.Bool
	s := &settler{idle: func() int { return 100 }, goroutines: func() int { return 10 }, releaseStep: 8,
		release: func() {
			close(started)
			<-unblock
			ended.Store(true)
		}}
	defer func(prev *settler) { lotSettler = prev }(lotSettler)
	lotSettler = s
	l, _ := parkingListener(t)
	<-started // the poller's second look (settleEvery after its first) finds the burst over
	closed := make(chan struct{})
	go func() {
		l.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while the release ran")
	case <-time.After(50 * time.Millisecond):
	}
	close(unblock)
	<-closed
	if !ended.Load() {
		t.Fatal("Close returned before the release ended")
	}
}
