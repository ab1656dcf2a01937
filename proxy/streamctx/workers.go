package streamctx

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// MaxIdleWorkers is how many worker goroutines wait for the next stream
// when there is none; more end after theirs. It should cover the streams
// in flight at once: with 128, a load of 1,000 concurrent HTTP/3 streams
// (100 connections x 10) still started goroutines as bursts ended and
// began, and stack growth stayed at 3.9 % of the CPU; with 1,024 it fell
// to 0.4 %, for 2 MiB more RSS (each idle worker keeps its stack).
const MaxIdleWorkers = 1024

// Job is one stream for a worker to serve: its handler, then its
// response.
type Job interface{ Serve() }

// Workers runs streams on goroutines that outlive one stream. A new
// goroutine's stack starts small and is copied each time it grows while
// the pipeline runs deep, which cost 7 % of the server's CPU per cached
// h3 request in a profile (runtime.newstack, copystack); a goroutine
// that served a stream before has grown already. A job is handed to a
// waiting worker, or to a new one when none waits, so a stream never
// queues behind another. Each server counts its own streams (Streams)
// for its shutdown: the workers are the process's.
type Workers struct {
	jobs chan Job     // unbuffered: a send succeeds only when a worker waits
	idle atomic.Int32 // workers waiting, or about to
	// started counts the goroutines started: far fewer than streams
	// once the load is steady.
	started atomic.Int64
}

// Shared is the one pool every HTTP/2 and HTTP/3 server of the process
// hands its streams to: a goroutine grown serving either protocol serves
// the next stream of both, and MaxIdleWorkers bounds the idle ones of
// all listeners together.
var Shared = NewWorkers()

// NewWorkers returns an empty pool.
func NewWorkers() *Workers { return &Workers{jobs: make(chan Job)} }

// Run serves j on a waiting worker, or on a new one.
func (w *Workers) Run(j Job) {
	select {
	case w.jobs <- j:
	default:
		w.started.Add(1)
		go w.work(j)
	}
}

// work serves j, then the jobs handed to it, until next says to end.
func (w *Workers) work(j Job) {
	for ok := true; ok; j, ok = w.next() {
		j.Serve()
		j = nil // a waiting worker keeps no stream reachable
	}
}

// next waits for the next job, unless MaxIdleWorkers wait already: then
// it reports false, and the worker ends.
func (w *Workers) next() (Job, bool) {
	if w.idle.Add(1) > MaxIdleWorkers {
		w.idle.Add(-1)
		return nil, false
	}
	j := <-w.jobs
	w.idle.Add(-1)
	return j, true
}

// Started is the number of worker goroutines started so far.
func (w *Workers) Started() int64 { return w.started.Load() }

// Streams counts the streams one server has handed to the workers and
// not seen finish, for its shutdown to wait for. The zero value is
// ready.
type Streams struct {
	mu      sync.Mutex
	n       int
	waiting bool          // Wait began
	gone    chan struct{} // closed when n drops to 0 after Wait began
}

// Add counts a stream in. It may be called after Wait began (a
// connection cut at the deadline may still be reading frames): that
// stream is counted, so Wait reports it instead of losing it.
func (s *Streams) Add() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

// Done counts a finished stream out.
func (s *Streams) Done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
	if s.n == 0 && s.waiting {
		s.closeGone()
	}
}

// closeGone closes gone once; a stream added after Wait may bring n
// back to 0 a second time. mu must be held.
func (s *Streams) closeGone() {
	select {
	case <-s.gone:
	default:
		close(s.gone)
	}
}

// Wait waits until every stream counted in has finished, or ctx ends. A
// handler cannot be cut short, so one still running at ctx's end is
// reported, and stays counted until it returns.
func (s *Streams) Wait(ctx context.Context) error {
	s.mu.Lock()
	if !s.waiting {
		s.waiting = true
		s.gone = make(chan struct{})
		if s.n == 0 {
			s.closeGone()
		}
	}
	gone := s.gone
	s.mu.Unlock()
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		if n := s.Running(); n > 0 {
			return fmt.Errorf("%d streams still running: %w", n, ctx.Err())
		}
		return nil // gone and ctx ended together
	}
}

// Running is the number of streams counted in and not yet finished.
func (s *Streams) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
