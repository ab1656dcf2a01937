package phppool

import (
	"context"
	"syscall"
	"time"
)

// supervise suspends and ends idle workers until ctx is done or the pool
// closes.
func (p *Pool) supervise(ctx context.Context) {
	every := superviseEvery(p.cfg.IdleSuspend, p.cfg.IdleExit)
	if every == 0 {
		select {
		case <-ctx.Done():
		case <-p.done:
		}
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.done:
			return
		case now := <-tick.C:
			p.suspendIdle(now)
			p.exitIdle(now)
		}
	}
}

// superviseEvery is the supervisor's tick: a quarter of the shortest
// idle limit set, within 10ms..1s; 0 if neither is set.
func superviseEvery(limits ...time.Duration) time.Duration {
	var every time.Duration
	for _, d := range limits {
		if d > 0 && (every == 0 || d/4 < every) {
			every = d / 4
		}
	}
	if every == 0 {
		return 0
	}
	return min(max(every, 10*time.Millisecond), time.Second)
}

// suspendIdle stops (SIGSTOP) idle workers unused for IdleSuspend. It
// holds mu, so tryAcquire never sees a worker between stop and mark.
func (p *Pool) suspendIdle(now time.Time) {
	if p.cfg.IdleSuspend <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.idle {
		if w.state != stateIdle || now.Sub(w.lastUsed) < p.cfg.IdleSuspend {
			continue
		}
		if err := w.signal(syscall.SIGSTOP); err != nil {
			continue // exited; its reaper removes it
		}
		w.state = stateSuspended
	}
}

// exitIdle terminates idle or suspended workers unused for IdleExit,
// least recently used first, keeping Min live workers.
func (p *Pool) exitIdle(now time.Time) {
	if p.cfg.IdleExit <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.draining {
		return
	}
	// idle is ordered by lastUsed, oldest first: parkLocked appends.
	n := 0
	for n < len(p.idle) && len(p.workers)-n > p.cfg.Min && now.Sub(p.idle[n].lastUsed) >= p.cfg.IdleExit {
		n++
	}
	old := append([]*worker(nil), p.idle[:n]...)
	for _, w := range old {
		p.retireLocked(w, false)
	}
}
