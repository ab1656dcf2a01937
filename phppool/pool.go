package phppool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Pool sentinels callers branch on with errors.Is.
var (
	// ErrBusy: no worker became free within Config.QueueWait. Callers
	// answer 503 with Retry-After.
	ErrBusy = errors.New("php pool busy")
	// ErrClosed: the pool was closed.
	ErrClosed = errors.New("php pool closed")
)

// Config describes one pool of php-cgi workers.
type Config struct {
	Name        string        // pool name for logs
	Binary      string        // php-cgi path; "" looks up "php-cgi" on PATH
	Min         int           // workers spawned by Start; 0 means 1
	Max         int           // processes at most, including ones exiting; 0 means 4
	MaxRequests int           // a worker is recycled after this many requests; 0 means 500
	IdleSuspend time.Duration // SIGSTOP a worker idle this long; 0 never suspends
	QueueWait   time.Duration // how long Do waits for a worker before ErrBusy; 0 means 5s
	Env         []string      // extra environment ("KEY=value"), after ramjet's own
	INI         []string      // "key=value" overrides, each passed as -d key=value
}

// Backoff after workers failed to start: doubled per failure, capped.
const (
	spawnBackoff    = 100 * time.Millisecond
	maxSpawnBackoff = 10 * time.Second
)

// Pool runs php-cgi workers, each its own process on its own loopback port
// with one keep-alive Conn, and hands each request to one idle worker.
type Pool struct {
	cfg  Config
	bin  string
	args []string // -d overrides
	env  []string
	log  *slog.Logger

	done      chan struct{}  // closed by Close
	closeOnce sync.Once      // guards closing done
	wg        sync.WaitGroup // supervisor, reapers, spawns, retirements

	mu       sync.Mutex // guards the fields below and each worker's state fields
	started  bool
	closed   bool
	cancel   context.CancelFunc // stops the supervisor
	workers  []*worker          // live workers, idle or not
	idle     []*worker          // idle or suspended; most recently used last
	procs    int                // spawns in progress + registered workers not yet reaped
	wake     chan struct{}      // closed and replaced when a worker or a slot frees
	failures int                // consecutive spawn failures
	retryAt  time.Time          // no spawn before this after a failure
	lastErr  error              // the last spawn failure
}

// New checks cfg, fills its defaults and resolves the binary. It starts
// nothing; Start spawns the first workers.
func New(cfg Config, log *slog.Logger) (*Pool, error) {
	if cfg.Min == 0 {
		cfg.Min = 1
	}
	if cfg.Max == 0 {
		cfg.Max = 4
	}
	if cfg.MaxRequests == 0 {
		cfg.MaxRequests = 500
	}
	if cfg.QueueWait == 0 {
		cfg.QueueWait = 5 * time.Second
	}
	var errs []error
	if cfg.Min < 0 || cfg.Max < 0 || cfg.Min > cfg.Max {
		errs = append(errs, fmt.Errorf("min %d, max %d: want 0 < min <= max", cfg.Min, cfg.Max))
	}
	if cfg.MaxRequests < 0 || cfg.IdleSuspend < 0 || cfg.QueueWait < 0 {
		errs = append(errs, errors.New("max requests, idle suspend and queue wait must not be negative"))
	}
	bin := cfg.Binary
	if bin == "" {
		bin = "php-cgi"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("phppool: pool %q: %w", cfg.Name, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pool{
		cfg:  cfg,
		bin:  path,
		log:  log.With("pool", cfg.Name),
		done: make(chan struct{}),
		wake: make(chan struct{}),
	}
	for _, kv := range cfg.INI {
		p.args = append(p.args, "-d", kv)
	}
	// Later entries win: php-cgi must serve one connection at a time in
	// one process and must not exit before the pool recycles it.
	p.env = append(append(os.Environ(), cfg.Env...),
		"PHP_FCGI_CHILDREN=0",
		"PHP_FCGI_MAX_REQUESTS="+strconv.Itoa(cfg.MaxRequests+100))
	return p, nil
}

// Start spawns Min workers and starts the supervisor, which suspends idle
// workers until ctx is done or Close. On error the caller still calls Close.
func (p *Pool) Start(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("phppool: pool %q: start: %w", p.cfg.Name, ErrClosed)
	}
	if p.started {
		p.mu.Unlock()
		return fmt.Errorf("phppool: pool %q: started twice", p.cfg.Name)
	}
	p.started = true
	ctx, p.cancel = context.WithCancel(ctx)
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		p.supervise(ctx)
	}()
	for i := range p.cfg.Min {
		if err := p.spawnIdle(ctx); err != nil {
			return fmt.Errorf("phppool: pool %q: spawn worker %d: %w", p.cfg.Name, i, err)
		}
	}
	return nil
}

// Close kills every worker (SIGCONT, SIGTERM, SIGKILL after a grace
// period), stops the supervisor and waits for all processes and
// goroutines. Requests in flight fail. It is idempotent.
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		ws := p.workers
		p.workers, p.idle = nil, nil
		cancel := p.cancel
		p.broadcastLocked()
		p.mu.Unlock()
		close(p.done)
		if cancel != nil {
			cancel()
		}
		for _, w := range ws {
			p.wg.Go(func() { w.terminate(killGrace) })
		}
		p.wg.Wait()
	})
	return nil
}

// Do runs one request on a worker (see Conn.Do for the arguments). It
// takes the most recently used idle worker, resuming it if suspended,
// spawns one if fewer than Max processes run, or waits up to QueueWait and
// returns ErrBusy. A worker whose Conn broke or that served MaxRequests is
// killed and replaced on demand.
func (p *Pool) Do(ctx context.Context, params []Param, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	w, err := p.acquire(ctx)
	if err != nil {
		return 0, err
	}
	status, err := w.conn.Do(ctx, params, stdin, stdout, stderr)
	p.release(w)
	if err != nil {
		return status, fmt.Errorf("phppool: pool %q worker %d: %w", p.cfg.Name, w.pid, err)
	}
	return status, nil
}

// WorkerStatus describes one live worker.
type WorkerStatus struct {
	PID      int
	State    string // idle, busy or suspended
	Requests int
	Age      time.Duration
}

// Status lists the live workers.
func (p *Pool) Status() []WorkerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	out := make([]WorkerStatus, 0, len(p.workers))
	for _, w := range p.workers {
		out = append(out, WorkerStatus{PID: w.pid, State: w.state.String(), Requests: w.requests, Age: now.Sub(w.started)})
	}
	return out
}

// acquire returns a busy worker for one request.
func (p *Pool) acquire(ctx context.Context) (*worker, error) {
	timer := time.NewTimer(p.cfg.QueueWait)
	defer timer.Stop()
	for {
		w, spawn, wait, err := p.tryAcquire()
		switch {
		case err != nil:
			return nil, fmt.Errorf("phppool: pool %q: %w", p.cfg.Name, err)
		case w != nil:
			return w, nil
		case spawn:
			w, err := p.spawnReserved(ctx)
			if err != nil {
				return nil, fmt.Errorf("phppool: pool %q: %w", p.cfg.Name, err)
			}
			return w, nil
		}
		select {
		case <-wait:
		case <-timer.C:
			return nil, fmt.Errorf("phppool: pool %q: no worker free within %v: %w", p.cfg.Name, p.cfg.QueueWait, ErrBusy)
		case <-ctx.Done():
			return nil, fmt.Errorf("phppool: pool %q: waiting for a worker: %w", p.cfg.Name, ctx.Err())
		}
	}
}

// tryAcquire takes an idle worker (resumed and busy), or reserves a spawn
// slot (spawn; the caller must call spawnReserved), or returns the channel
// to wait on.
func (p *Pool) tryAcquire() (w *worker, spawn bool, wait <-chan struct{}, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, false, nil, ErrClosed
	}
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
		}
		w.state = stateBusy
		return w, false, nil, nil
	}
	if p.procs < p.cfg.Max {
		if time.Now().Before(p.retryAt) {
			if p.procs == 0 {
				return nil, false, nil, fmt.Errorf("workers fail to start (retrying after %s): %w",
					p.retryAt.Format(time.TimeOnly), p.lastErr)
			}
		} else {
			p.procs++
			p.wg.Add(1)
			return nil, true, nil, nil
		}
	}
	return nil, false, p.wake, nil
}

// spawnReserved spawns a worker on a slot reserved by tryAcquire and
// registers it busy. A failure starts or extends the spawn backoff.
func (p *Pool) spawnReserved(ctx context.Context) (*worker, error) {
	defer p.wg.Done()
	w, err := p.spawn(ctx)
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
	p.parkLocked(w)
	return nil
}

// release returns w after a request: back to the idle stack, or retired
// (killed; its slot frees when reaped) if broken, dead or used up.
func (p *Pool) release(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.requests++
	if p.closed {
		return // Close terminates every worker it found registered
	}
	if !w.alive() || w.conn.Broken() || w.requests >= p.cfg.MaxRequests {
		p.removeLocked(w)
		p.wg.Go(func() { w.terminate(killGrace) })
		return
	}
	p.parkLocked(w)
}

// parkLocked puts w on top of the idle stack and wakes a waiter.
func (p *Pool) parkLocked(w *worker) {
	w.state = stateIdle
	w.lastUsed = time.Now()
	p.idle = append(p.idle, w)
	p.broadcastLocked()
}

// reaped is called once per process after it was waited for.
func (p *Pool) reaped(w *worker, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !w.registered {
		return // a failed spawn; spawnReserved frees its slot
	}
	p.procs--
	if p.removeLocked(w) && !p.closed {
		p.log.Warn("php-cgi worker exited unexpectedly", "pid", w.pid, "requests", w.requests, "err", err)
	}
	p.broadcastLocked()
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

// supervise suspends idle workers until ctx is done or the pool closes.
func (p *Pool) supervise(ctx context.Context) {
	if p.cfg.IdleSuspend <= 0 {
		select {
		case <-ctx.Done():
		case <-p.done:
		}
		return
	}
	tick := time.NewTicker(min(max(p.cfg.IdleSuspend/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.done:
			return
		case now := <-tick.C:
			p.suspendIdle(now)
		}
	}
}

// suspendIdle stops (SIGSTOP) idle workers unused for IdleSuspend. It
// holds mu, so tryAcquire never sees a worker between stop and mark.
func (p *Pool) suspendIdle(now time.Time) {
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
