package streamctx

import (
	"context"
	"testing"
)

// A worker that finishes when MaxIdleWorkers already wait ends instead
// of waiting too; after Stop, none waits, and Stop returns once the
// workers have ended.
func TestIdleWorkersAreBounded(t *testing.T) {
	w := NewWorkers(func(int) {})
	w.idle.Store(MaxIdleWorkers)
	if _, ok := w.next(); ok {
		t.Fatal("a worker waits with MaxIdleWorkers waiting already")
	}
	if n := w.idle.Load(); n != MaxIdleWorkers {
		t.Fatalf("idle %d after a worker ended, want %d", n, MaxIdleWorkers)
	}
	w.idle.Store(0)
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.next(); ok {
		t.Fatal("a worker waits after Stop")
	}
}

// Jobs run one after the other reuse the waiting worker; Stop ends it.
func TestWorkersReuseWaitingGoroutines(t *testing.T) {
	done := make(chan int)
	w := NewWorkers(func(j int) { done <- j })
	for i := range 20 {
		w.Run(i)
		if got := <-done; got != i {
			t.Fatalf("job %d served as %d", i, got)
		}
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := w.Started(); n > 5 {
		t.Errorf("%d goroutines started for 20 jobs one after the other", n)
	}
	if n := w.Running(); n != 0 {
		t.Errorf("%d workers running after Stop", n)
	}
}
