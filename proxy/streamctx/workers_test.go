package streamctx

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A worker that finishes when MaxIdleWorkers already wait ends instead
// of waiting too.
func TestIdleWorkersAreBounded(t *testing.T) {
	w := NewWorkers()
	w.idle.Store(MaxIdleWorkers)
	if _, ok := w.next(); ok {
		t.Fatal("a worker waits with MaxIdleWorkers waiting already")
	}
	if n := w.idle.Load(); n != MaxIdleWorkers {
		t.Fatalf("idle %d after a worker ended, want %d", n, MaxIdleWorkers)
	}
}

type jobFunc func()

func (f jobFunc) Serve() { f() }

// Jobs run one after the other reuse the waiting worker.
func TestWorkersReuseWaitingGoroutines(t *testing.T) {
	w := NewWorkers()
	done := make(chan int)
	for i := range 20 {
		w.Run(jobFunc(func() { done <- i }))
		if got := <-done; got != i {
			t.Fatalf("job %d served as %d", i, got)
		}
	}
	if n := w.Started(); n > 5 {
		t.Errorf("%d goroutines started for 20 jobs one after the other", n)
	}
}

// Wait returns once the streams counted in are done; at ctx's end it
// reports those still running, which stay counted until they finish.
func TestStreamsWaitForTheirOwnOnly(t *testing.T) {
	var s Streams
	s.Add()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) || s.Running() != 1 {
		t.Fatalf("Wait with a stream running = %v, %d running; want DeadlineExceeded, 1", err, s.Running())
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait(context.Background()) }()
	s.Done()
	if err := <-done; err != nil || s.Running() != 0 {
		t.Fatalf("Wait after the stream finished = %v, %d running", err, s.Running())
	}
	var idle Streams
	if err := idle.Wait(context.Background()); err != nil {
		t.Fatalf("Wait with no stream = %v", err)
	}
}
