package h3

import (
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go"
)

// maxIdleWorkers is how many stream goroutines wait for the next stream
// when there is none; more end after theirs. It should cover the streams
// in flight at once: with 128, a load of 1,000 concurrent streams (100
// connections x 10) still started goroutines as bursts ended and began,
// and stack growth stayed at 3.9 % of the CPU; with 1,024 it fell to
// 0.4 %, for 2 MiB more RSS (each idle worker keeps its stack).
const maxIdleWorkers = 1024

// workers runs request streams on goroutines that outlive one stream. A
// new goroutine's stack starts small and is copied each time it grows
// while the pipeline runs deep, which cost 7 % of the server's CPU per
// cached h3 request in a profile (runtime.newstack, copystack); a
// goroutine that served a stream before has grown already. Streams are
// handed to a waiting worker, or to a new one when none waits, so a
// stream never queues behind another.
type workers struct {
	jobs chan job      // unbuffered: a send succeeds only when a worker waits
	quit chan struct{} // closed by close: waiting workers end
	idle atomic.Int32  // workers waiting, or about to
	// started counts the goroutines started: far fewer than streams
	// once the load is steady.
	started atomic.Int64
	wg      sync.WaitGroup
	once    sync.Once
}

// job is one request stream to serve.
type job struct {
	c     *conn
	qs    *quic.Stream
	early bool // opened before the handshake completed: 0-RTT data
}

func newWorkers() *workers {
	return &workers{jobs: make(chan job), quit: make(chan struct{})}
}

// run serves j on a waiting worker, or on a new one.
func (w *workers) run(j job) {
	select {
	case w.jobs <- j:
	default:
		w.started.Add(1)
		w.wg.Add(1)
		go w.work(j)
	}
}

// work serves j, then the streams handed to it, until next says to end.
func (w *workers) work(j job) {
	defer w.wg.Done()
	for ok := true; ok; j, ok = w.next() {
		j.c.serveStream(j.qs, j.early)
	}
}

// next waits for the next stream, unless maxIdleWorkers wait already or
// close was called: then it reports false, and the worker ends.
func (w *workers) next() (job, bool) {
	if w.idle.Add(1) > maxIdleWorkers {
		w.idle.Add(-1)
		return job{}, false
	}
	select {
	case j := <-w.jobs:
		w.idle.Add(-1)
		return j, true
	case <-w.quit:
		w.idle.Add(-1)
		return job{}, false
	}
}

// close ends the waiting workers and, with wait, waits for every worker
// (the caller has seen every stream end; without, a handler that never
// returns keeps its worker).
func (w *workers) close(wait bool) {
	w.once.Do(func() { close(w.quit) })
	if wait {
		w.wg.Wait()
	}
}
