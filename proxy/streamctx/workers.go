package streamctx

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// MaxIdleWorkers is how many worker goroutines of a server wait for the
// next stream when there is none; more end after theirs. It should
// cover the streams in flight at once: with 128, a load of 1,000
// concurrent HTTP/3 streams (100 connections x 10) still started
// goroutines as bursts ended and began, and stack growth stayed at 3.9 %
// of the CPU; with 1,024 it fell to 0.4 %, for 2 MiB more RSS (each idle
// worker keeps its stack).
const MaxIdleWorkers = 1024

// Workers runs the streams of HTTP/2 and HTTP/3 (jobs of type J, each
// served by serve) on goroutines that outlive one stream. A new
// goroutine's stack starts small and is copied each time it grows while
// the pipeline runs deep, which cost 7 % of the server's CPU per cached
// h3 request in a profile (runtime.newstack, copystack); a goroutine
// that served a stream before has grown already. A job is handed to a
// waiting worker, or to a new one when none waits, so a stream never
// queues behind another. The server owns its Workers: Stop ends the
// waiting ones and waits for the busy ones.
type Workers[J any] struct {
	serve func(J)
	jobs  chan J        // unbuffered: a send succeeds only when a worker waits
	quit  chan struct{} // closed by Stop: waiting workers end
	idle  atomic.Int32  // workers waiting, or about to
	// started counts the goroutines started: far fewer than streams
	// once the load is steady.
	started atomic.Int64

	mu      sync.Mutex    // guards live, stopped and gone
	live    int           // worker goroutines started and not yet returned
	stopped bool          // Stop began
	gone    chan struct{} // closed when live drops to 0 after Stop
}

// NewWorkers returns workers that serve each job with serve.
func NewWorkers[J any](serve func(J)) *Workers[J] {
	return &Workers[J]{serve: serve, jobs: make(chan J), quit: make(chan struct{}), gone: make(chan struct{})}
}

// Run serves j on a waiting worker, or on a new one. It may be called
// after Stop (a connection cut at the deadline may still be reading
// frames): that worker is counted, so Stop reports it instead of losing
// it.
func (w *Workers[J]) Run(j J) {
	select {
	case w.jobs <- j:
	default:
		w.started.Add(1)
		w.mu.Lock()
		w.live++
		w.mu.Unlock()
		go w.work(j)
	}
}

// work serves j, then the jobs handed to it, until next says to end.
func (w *Workers[J]) work(j J) {
	defer w.exit()
	for ok := true; ok; j, ok = w.next() {
		w.serve(j)
	}
}

// next waits for the next job, unless MaxIdleWorkers wait already or
// Stop was called: then it reports false, and the worker ends.
func (w *Workers[J]) next() (J, bool) {
	var none J
	if w.idle.Add(1) > MaxIdleWorkers {
		w.idle.Add(-1)
		return none, false
	}
	select {
	case j := <-w.jobs:
		w.idle.Add(-1)
		return j, true
	case <-w.quit:
		w.idle.Add(-1)
		return none, false
	}
}

func (w *Workers[J]) exit() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.live--
	if w.live == 0 && w.stopped {
		w.closeGone()
	}
}

// closeGone closes gone once; a worker started after Stop may bring
// live back to 0 a second time. mu must be held.
func (w *Workers[J]) closeGone() {
	select {
	case <-w.gone:
	default:
		close(w.gone)
	}
}

// Stop makes waiting workers end and waits until the busy ones have
// finished their jobs or ctx ends. A handler cannot be cut short, so one
// still running at ctx's end is reported, and stays counted until it
// returns and its worker ends.
func (w *Workers[J]) Stop(ctx context.Context) error {
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		close(w.quit)
		if w.live == 0 {
			w.closeGone()
		}
	}
	w.mu.Unlock()
	select {
	case <-w.gone:
		return nil
	case <-ctx.Done():
		if w.Running() == 0 {
			return nil // gone and ctx ended together
		}
		return fmt.Errorf("%d stream workers still running: %w", w.Running(), ctx.Err())
	}
}

// Running is the number of worker goroutines not yet returned.
func (w *Workers[J]) Running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live
}

// Started is the number of worker goroutines started so far.
func (w *Workers[J]) Started() int64 { return w.started.Load() }
