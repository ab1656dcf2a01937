package conns

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// A settler gives memory back to the system after a burst of connections
// went idle. Serving them left garbage and pooled read and write buffers
// on the heap (after TLS handshakes, their buffers too); an idle server
// allocates nothing, so no GC comes to free them before the runtime's
// own, every two minutes, and even then the scavenger keeps up to twice
// the live heap. At 10,000 idle connections that is a third of the
// process's memory.
type settler struct {
	idle        func() int // connections idle now
	goroutines  func() int // runtime.NumGoroutine but in tests
	releaseStep int        // this many more idle than low starts a release
	release     func()     // freeMemory but in tests

	mu         sync.Mutex // guards the fields below: every lot's poller calls settle
	low        int        // idle connections at the last release, or fewer since
	prev       int        // idle connections at settle's previous look
	after      int        // goroutines at the last release; 0: none yet
	nextSettle time.Time
	releasing  atomic.Bool // a release is running (settle said so, run has not returned)
}

// idleSettler is the process's: one release for every listener's idle
// connections, parked (every lot's) or waiting in an HTTP/2 connection's
// goroutine (WaitingIdle).
var idleSettler = settler{idle: idleNow, goroutines: runtime.NumGoroutine, releaseStep: releaseStep, release: freeMemory}

// lotSettler is the settler a new lot calls: idleSettler but in tests.
var lotSettler = &idleSettler

var parkedNow, waitingNow atomic.Int64

func idleNow() int { return int(parkedNow.Load() + waitingNow.Load()) }

// WaitingIdle counts an idle connection that waits for its client on a
// goroutine of its own instead of in a lot (an HTTP/2 one: +1 as it
// starts waiting, -1 when it stops), so that a burst of them is settled
// as parked ones are.
func WaitingIdle(delta int) { waitingNow.Add(int64(delta)) }

// settleEvery is how often settle looks: a lot's poller calls it at
// least every sweep, each lot's.
const settleEvery = time.Second

// releaseStep is how many more connections must be idle than at the last
// release (or fewer since) for the next one; a quarter of it fewer
// goroutines after it, for one more.
const releaseStep = 1024

// settle reports whether a release (s.run) is to start now: when
// releaseStep more connections are idle than at the last one, and the
// burst is over: fewer than a quarter of that went idle since the
// previous look, once per settleEvery (a release while connections keep
// coming would have their garbage come after it). After a release, a
// quarter of releaseStep fewer goroutines starts another: the burst left
// that many fasthttp workers waiting idle, each on a stack its requests
// grew, and their stacks are freed by the first collection after the
// worker pool ends them (WorkerIdle later). One such release per burst:
// a load whose goroutines come and go does not start one each time. One
// release runs at a time; the caller runs it on a goroutine it owns (a
// lot's: its work is that of any GC of the live heap, too long for the
// poller to wait) and must run it when told to.
func (s *settler) settle(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(s.nextSettle) {
		return false
	}
	s.nextSettle = now.Add(settleEvery)
	n, g := s.idle(), s.goroutines()
	s.low = min(s.low, n)
	growing := n-s.prev >= s.releaseStep/4
	s.prev = n
	burst := n-s.low >= s.releaseStep
	reaped := s.after > 0 && s.after-g >= s.releaseStep/4
	if !burst && !reaped || growing || !s.releasing.CompareAndSwap(false, true) {
		return false
	}
	s.low, s.after = n, g
	if !burst {
		s.after = 0 // one for the workers of each burst
	}
	return true
}

// run is the release settle asked for.
func (s *settler) run() {
	defer s.releasing.Store(false)
	s.release()
}

// freeMemory collects twice, the second time giving back all it can: a
// sync.Pool (fasthttp's read and write buffers) keeps what it held
// through one GC.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// Waiting is how many connections wait idle through WaitingIdle now.
func Waiting() int { return int(waitingNow.Load()) }

// WorkerIdle is how long a server keeps a worker goroutine that has no
// connection to serve (fasthttp's MaxIdleWorkerDuration; its default is
// 10 s). A burst of connections that go idle leaves hundreds of workers
// waiting, each on a stack its requests grew (3-5 MB at 10,000), and
// only their end and the release after it (settle) give that back; a
// busy server's workers are never idle that long.
const WorkerIdle = time.Second
