package phppool

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// waiter is a Do call queued for a worker. A freed worker is handed to
// the oldest waiter through ch (FIFO), so waiters are served in order and
// one release wakes one goroutine; a goroutine that just released cannot
// take its worker back ahead of those waiting.
type waiter struct {
	ch chan *worker // buffered 1; sent to under Pool.mu
}

// acquire returns a busy worker for one request. A request that had to
// wait gets none if its client went away meanwhile (ErrClientGone): the
// worker goes on to the next in line instead of running a script nobody
// reads.
func (p *Pool) acquire(ctx context.Context) (*worker, error) {
	w, waited, err := p.acquireWaiting(ctx)
	if err != nil || !waited {
		return w, err
	}
	if c, ok := ctx.Value(clientKey{}).(Client); ok && c.Gone() {
		p.giveBack(w)
		p.stats.clientGone.Add(1)
		return nil, fmt.Errorf("phppool: pool %q: %w", p.cfg.Name, ErrClientGone)
	}
	return w, nil
}

// acquireWaiting is acquire; waited reports that it queued.
func (p *Pool) acquireWaiting(ctx context.Context) (w *worker, waited bool, err error) {
	var timeout <-chan time.Time // started at the first wait
	for {
		w, spawn, wt, wake, err := p.tryAcquire()
		switch {
		case err != nil:
			return nil, waited, fmt.Errorf("phppool: pool %q: %w", p.cfg.Name, err)
		case w != nil:
			return w, waited, nil
		case spawn:
			w, err := p.spawnReserved(ctx)
			if err != nil {
				p.unbusy()
				return nil, waited, fmt.Errorf("phppool: pool %q: %w", p.cfg.Name, err)
			}
			return w, waited, nil
		}
		waited = true
		if timeout == nil {
			timer := time.NewTimer(p.cfg.QueueWait)
			defer timer.Stop()
			timeout = timer.C
		}
		if w, err := p.await(ctx, wt, wake, timeout); w != nil || err != nil {
			return w, waited, err
		}
	}
}

// Client is the HTTP client a request runs for, as the caller sees it
// (WithClient).
type Client interface {
	// Gone reports, at once and without blocking, whether the client
	// went away (closed or reset its connection).
	Gone() bool
}

type clientKey struct{}

// WithClient returns ctx carrying the client c of a request: Do asks it
// whether the client is still there when a request that waited for a
// worker gets one, and returns ErrClientGone without running the script
// if not.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// await waits in the queue for a handed-over worker. It returns neither a
// worker nor an error when a slot may have freed (wake): the caller tries
// again, perhaps to spawn.
func (p *Pool) await(ctx context.Context, wt *waiter, wake <-chan struct{}, timeout <-chan time.Time) (*worker, error) {
	select {
	case w := <-wt.ch:
		return w, nil
	case <-wake:
		return p.dequeue(wt), nil
	case <-timeout:
		if w := p.dequeue(wt); w != nil {
			return w, nil
		}
		p.stats.busy.Add(1)
		return nil, fmt.Errorf("phppool: pool %q: no worker free within %v: %w", p.cfg.Name, p.cfg.QueueWait, ErrBusy)
	case <-ctx.Done():
		if w := p.dequeue(wt); w != nil {
			p.giveBack(w)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) { // one sentinel for the caller's 504
			return nil, fmt.Errorf("phppool: pool %q: waiting for a worker: %w: %w", p.cfg.Name, ErrTimeout, ctx.Err())
		}
		return nil, fmt.Errorf("phppool: pool %q: waiting for a worker: %w", p.cfg.Name, ctx.Err())
	}
}

// dequeue takes wt out of the queue, or returns the worker handed to it
// meanwhile.
func (p *Pool) dequeue(wt *waiter) *worker {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.queue, wt); i >= 0 {
		p.queue = slices.Delete(p.queue, i, i+1)
		return nil
	}
	return <-wt.ch // sent under mu before wt left the queue
}

// giveBack returns an unused worker handed to a waiter that gave up.
func (p *Pool) giveBack(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.busy--
		return
	}
	p.reuseLocked(w)
}

// tryAcquire takes an idle worker (resumed and busy), or reserves a spawn
// slot (spawn; the caller must call spawnReserved), or queues a waiter and
// returns it with the channel that signals a freed slot.
func (p *Pool) tryAcquire() (w *worker, spawn bool, wt *waiter, wake <-chan struct{}, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, false, nil, nil, ErrClosed
	}
	if w := p.popIdleLocked(); w != nil {
		p.busy++
		return w, false, nil, nil, nil
	}
	if p.procs < p.cfg.Max {
		if time.Now().Before(p.retryAt) {
			if p.procs == 0 {
				return nil, false, nil, nil, fmt.Errorf("workers fail to start (retrying after %s): %w",
					p.retryAt.Format(time.TimeOnly), p.lastErr)
			}
		} else {
			p.procs++
			p.busy++
			p.wg.Add(1)
			return nil, true, nil, nil, nil
		}
	}
	wt = &waiter{ch: make(chan *worker, 1)}
	p.queue = append(p.queue, wt)
	return nil, false, wt, p.wake, nil
}

// popIdleLocked takes the most recently used live idle worker, resumed
// (SIGCONT) if it was suspended, and marks it busy.
func (p *Pool) popIdleLocked() *worker {
	for len(p.idle) > 0 {
		w := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !w.alive() {
			continue // its reaper removes it from workers
		}
		if w.state == stateSuspended {
			if err := w.signal(syscall.SIGCONT); err != nil {
				continue // exited; as above
			}
			w.resumedAt = time.Now()
			p.stats.resumes.Add(1)
		}
		w.state = stateBusy
		return w
	}
	return nil
}

// dropExitedIdle takes out of the idle list the workers whose process has
// exited before their reaper saw it: a master killed ends its children
// together, and the retry after the first one failed must not go to a
// sibling that died with it. Only the failure path pays for the look at
// each pidfd; their reapers remove them from workers, as popIdleLocked's
// skipped ones.
func (p *Pool) dropExitedIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = slices.DeleteFunc(p.idle, func(w *worker) bool {
		return !w.alive() || (w.pidfd != nil && w.pidfd.exited())
	})
}

// unbusy gives back the busy count of a reserved spawn that failed.
func (p *Pool) unbusy() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy--
	p.broadcastLocked()
}

// spawnReserved spawns a worker on a slot reserved by tryAcquire and
// registers it busy. A failure starts or extends the spawn backoff.
func (p *Pool) spawnReserved(ctx context.Context) (*worker, error) {
	defer p.wg.Done()
	w, err := p.eng.spawn(ctx)
	p.mu.Lock()
	if err == nil && !w.alive() {
		err = fmt.Errorf("phppool: worker %d: %w", w.pid, errExitedEarly)
	}
	if err != nil {
		p.procs--
		p.failures++
		p.retryAt = time.Now().Add(min(spawnBackoff<<min(p.failures-1, 16), maxSpawnBackoff))
		p.lastErr = err
		p.broadcastLocked()
		p.mu.Unlock()
		return nil, err
	}
	if p.closed {
		p.procs--
		p.mu.Unlock()
		w.terminate(killGrace)
		return nil, ErrClosed
	}
	p.failures = 0
	p.stats.spawns.Add(1)
	w.registered = true
	w.state = stateBusy
	p.workers = append(p.workers, w)
	p.mu.Unlock()
	return w, nil
}

// spawnIdle adds one idle worker if a slot is free (used by Start).
func (p *Pool) spawnIdle(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if p.procs >= p.cfg.Max {
		p.mu.Unlock()
		return nil
	}
	p.procs++
	p.wg.Add(1)
	p.mu.Unlock()
	w, err := p.spawnReserved(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy++ // as if acquired: reuseLocked hands it on or parks it
	p.reuseLocked(w)
	return nil
}

// release says what happens to a worker after its request.
type release struct {
	kill    bool  // timed out: SIGKILL at once
	overRSS bool  // grew past MaxRSS: recycle
	failed  error // the worker died or broke the protocol: a crash
}

// release returns w after a request: to the oldest waiter or the idle
// stack (reuseLocked), or retired (terminated; its slot frees when
// reaped) if broken, dead, used up, too big or timed out. handed reports
// that a waiting request got it.
func (p *Pool) release(w *worker, r release) (handed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.requests++
	if p.closed {
		p.busy--
		return false // Close terminates every worker it found registered
	}
	switch {
	case r.kill:
		p.retireLocked(w, true)
	case r.failed != nil:
		p.crashedLocked(w, r.failed)
		p.retireLocked(w, false)
	case !w.alive() || w.conn.Load().Broken():
		p.retireLocked(w, false)
	case w.requests >= p.cfg.MaxRequests || r.overRSS:
		p.stats.recycled.Add(1)
		p.retireLocked(w, false)
	default:
		return p.reuseLocked(w)
	}
	p.busy--
	if p.draining {
		p.broadcastLocked() // Shutdown waits for busy to reach 0
	}
	return false
}

// reuseLocked hands the busy worker w to the oldest waiter (handed), or
// else parks it idle; a draining pool retires it instead of parking.
func (p *Pool) reuseLocked(w *worker) (handed bool) {
	if len(p.queue) > 0 {
		wt := p.queue[0]
		p.queue = slices.Delete(p.queue, 0, 1)
		wt.ch <- w // buffered; wt's goroutine takes it
		return true
	}
	p.busy--
	if p.draining {
		p.retireLocked(w, false)
		p.broadcastLocked()
		return false
	}
	p.parkLocked(w)
	return false
}

// parkLocked puts w on top of the idle stack; nobody is queued for it.
func (p *Pool) parkLocked(w *worker) {
	w.state = stateIdle
	w.lastUsed = time.Now()
	p.idle = append(p.idle, w)
}

// retireLocked removes w from the pool and ends it in the background:
// SIGKILL if kill, else SIGTERM with a grace period. Its slot frees when
// it is reaped.
func (p *Pool) retireLocked(w *worker, kill bool) {
	p.removeLocked(w)
	w.retired = true
	if kill {
		p.wg.Go(w.kill)
		return
	}
	p.wg.Go(func() { w.terminate(killGrace) })
}

// reaped is called once per process after it was waited for.
func (p *Pool) reaped(w *worker, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !w.registered {
		return // a failed spawn; spawnReserved frees its slot
	}
	p.procs--
	p.removeLocked(w)
	if !p.closed && (!w.retired || !endedAsAsked(err)) {
		p.crashedLocked(w, err)
	}
	p.broadcastLocked()
}

// crashedLocked counts and logs w's crash once. Both the request that saw
// the worker fail and its reaper report it, in either order.
func (p *Pool) crashedLocked(w *worker, err error) {
	if w.crashed {
		return
	}
	w.crashed = true
	p.stats.crashes.Add(1)
	p.log.Warn("php-cgi worker crashed", "pid", w.pid, "requests", w.requests, "err", err)
}

// endedAsAsked reports whether a process's exit is what the pool's
// SIGTERM or SIGKILL brings: a clean exit or death by one of them. A
// worker that crashed on its own just before it was retired shows up
// otherwise (a segfault, a non-zero exit).
func endedAsAsked(err error) bool {
	if err == nil {
		return true
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGTERM || ws.Signal() == syscall.SIGKILL)
}

// removeLocked drops w from workers and idle; it reports whether w was live.
func (p *Pool) removeLocked(w *worker) bool {
	p.idle = slices.DeleteFunc(p.idle, func(x *worker) bool { return x == w })
	n := len(p.workers)
	p.workers = slices.DeleteFunc(p.workers, func(x *worker) bool { return x == w })
	return len(p.workers) < n
}

// broadcastLocked wakes every goroutine waiting for a worker.
func (p *Pool) broadcastLocked() {
	close(p.wake)
	p.wake = make(chan struct{})
}
