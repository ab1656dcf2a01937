package conns

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// settler gives memory back to the system after a burst of connections
// went idle. Serving them left garbage and pooled read and write buffers
// on the heap, and their goroutines' stacks; an idle server allocates
// nothing, so no GC comes to free them before the runtime's own, every
// two minutes, and even then the scavenger keeps up to twice the live
// heap. At 10,000 idle connections that is a third of the process's
// memory. The poller's fields.
type settler struct {
	releaseStep int    // this many more parked than low starts a release
	release     func() // freeMemory but in tests
	low         int    // parked connections at the last release, or fewer since
	prev        int    // parked connections at settle's previous look
	nextSettle  time.Time
	releasing   atomic.Bool
	releases    sync.WaitGroup
}

// releaseStep is how many more connections must be parked than at the
// last release (or fewer since) for the next one.
const releaseStep = 1024

// settle starts a release (freeMemory, on a goroutine of its own: its
// work is that of any GC of the live heap) when releaseStep more
// connections are parked than at the last one, and the burst is over:
// fewer than a quarter of that were parked since the poller's previous
// look, once per sweep (a release while connections keep coming would
// have their garbage come after it).
func (p *lot) settle(now time.Time) {
	if now.Before(p.nextSettle) {
		return
	}
	p.nextSettle = now.Add(sweep)
	p.mu.Lock()
	n := len(p.byFD)
	p.mu.Unlock()
	p.low = min(p.low, n)
	growing := n-p.prev >= p.releaseStep/4
	p.prev = n
	if n-p.low < p.releaseStep || growing || !p.releasing.CompareAndSwap(false, true) {
		return
	}
	p.low = n
	p.releases.Add(1)
	go func() {
		defer p.releases.Done()
		defer p.releasing.Store(false)
		p.release()
	}()
}

// freeMemory collects twice, the second time giving back all it can: a
// sync.Pool (fasthttp's read and write buffers) keeps what it held
// through one GC.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}
