package phppool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
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
	// ErrTimeout: the request ran past Config.RequestTimeout (or the
	// caller's deadline) and its worker was killed. Callers answer 504.
	// context.DeadlineExceeded is in the chain too.
	ErrTimeout = errors.New("php request timed out")
	// ErrWorkerFailed: the worker died or broke the protocol before
	// finishing the response, and the request could not safely go to
	// another worker. Callers answer 502.
	ErrWorkerFailed = errors.New("php worker failed")
	// ErrClientGone: the request waited for a worker and its client had
	// gone away when one came (WithClient); the script was not run.
	ErrClientGone = errors.New("php request's client went away while it waited for a worker")
)

// Engine is how a pool's workers come to be.
type Engine string

const (
	// EngineShared (the default): one php-cgi master per pool forks Max
	// children, which share the master's opcache; ramjet connects to the
	// master's socket and claims the child that accepted as a worker
	// (master.go). An ended worker's place is taken by a fresh fork.
	EngineShared Engine = "shared"
	// EngineSeparate: one php-cgi process per worker, each on its own
	// socket with its own opcache (separate.go); processes start and end
	// with the demand.
	EngineSeparate Engine = "separate"
)

// Config describes one pool of php-cgi workers. Zero values are the
// documented defaults; New rejects negative ones.
type Config struct {
	Name        string        // pool name for logs
	Engine      Engine        // how workers run; "" means EngineShared
	Binary      string        // php-cgi path; "" looks up "php-cgi" on PATH
	Min         int           // workers spawned by Start and kept through IdleExit; 0 means 1
	Max         int           // processes at most, including ones exiting; 0 means 4
	MaxRequests int           // a worker is recycled after this many requests; 0 means 500
	MaxRSS      int64         // a worker whose own memory (resident, less the pages it shares) exceeds this many bytes after a request is recycled; 0 never
	IdleSuspend time.Duration // SIGSTOP a worker idle this long; 0 never suspends
	IdleExit    time.Duration // terminate idle or suspended workers unused this long, keeping Min live; 0 never
	QueueWait   time.Duration // how long Do waits for a worker before ErrBusy; 0 means 5s

	// RequestTimeout bounds one request on a worker (the wait for a worker
	// is bounded by QueueWait). Past it Do fails with ErrTimeout and the
	// worker is killed with SIGKILL at once: it may be in an endless loop,
	// and SIGTERM would not stop it. 0 means none (the caller's ctx only).
	RequestTimeout time.Duration
	// SlowRequest: requests slower than this are logged with their
	// SCRIPT_FILENAME, worker pid and duration. 0 logs none.
	SlowRequest time.Duration

	// User and Group are who the workers run as: User "" means "nobody",
	// Group "" means the user's primary group (nogroup for nobody on
	// Debian), and supplementary groups are dropped. New refuses uid or
	// gid 0 and ramjet's own uid or gid (ErrOwnUser), and a ramjet that
	// is neither root nor holds CAP_SETUID and CAP_SETGID
	// (ErrCannotSwitch). Workers never inherit ramjet's capabilities.
	User, Group string

	// Env is the workers' whole environment besides the pool's own
	// PHP_FCGI_* settings: "NAME=value", or "NAME" for ramjet's own value
	// (left out when ramjet has none). Nothing else of ramjet's
	// environment reaches PHP, as with php-fpm's clear_env and env[NAME].
	Env     []string
	INIFile string   // php.ini to use instead of php-cgi's own (-c); "" keeps it
	INI     []string // "key=value" overrides, each passed as -d key=value

	// Confine, when set, confines the workers with Landlock to the trees
	// it lists (confine.go); New fails where the kernel cannot.
	Confine *Confine
}

// engine starts and ends the processes behind a pool's workers.
type engine interface {
	// spawn returns a new worker with its Conn; the caller holds a procs
	// slot. On failure nothing it started is left running.
	spawn(ctx context.Context) (*worker, error)
	// stop ends what the engine runs besides the workers, once Close has
	// ended every worker.
	stop()
}

// Backoff after workers failed to start: doubled per failure, capped.
const (
	spawnBackoff    = 100 * time.Millisecond
	maxSpawnBackoff = 10 * time.Second
)

// drainLinger is how long Shutdown keeps serving after it was called:
// requests that picked this pool just before a reload swapped it out
// still arrive for a moment.
const drainLinger = 500 * time.Millisecond

// Pool runs php-cgi workers, each its own process on its own Unix socket
// with one keep-alive Conn, and hands each request to one idle worker.
type Pool struct {
	cfg   Config
	eng   engine
	bin   string
	args  []string // -c and -d
	env   []string
	cred  *syscall.Credential // never nil: New refuses to run workers as ramjet's user
	socks *sockets            // set by Start
	// confine: how workers are confined; nil when they are not.
	confine *confinement
	log     *slog.Logger
	stats   counters

	done      chan struct{}  // closed by Close
	closeOnce sync.Once      // guards closing done
	wg        sync.WaitGroup // supervisor, reapers, spawns, retirements

	mu       sync.Mutex // guards the fields below and each worker's state fields
	started  bool
	closed   bool
	draining bool               // Shutdown called: busy workers retire after their request
	cancel   context.CancelFunc // stops the supervisor
	workers  []*worker          // live workers, idle or not
	idle     []*worker          // idle or suspended; most recently used last
	procs    int                // spawns in progress + registered workers not yet reaped
	busy     int                // workers handed to Do, including reserved spawns
	queue    []*waiter          // Do calls waiting for a worker, oldest first
	wake     chan struct{}      // closed and replaced when a worker or a slot frees
	failures int                // consecutive spawn failures
	retryAt  time.Time          // no spawn before this after a failure
	lastErr  error              // the last spawn failure
}

// New checks cfg, fills its defaults, resolves the binary and the workers'
// user. It starts nothing; Start spawns the first workers.
func New(cfg Config, log *slog.Logger) (*Pool, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("pool", cfg.Name)
	cfg = withDefaults(cfg)
	path, err := validate(cfg)
	if err != nil {
		return nil, fmt.Errorf("phppool: pool %q: %w", cfg.Name, err)
	}
	euid := os.Geteuid()
	cred, err := workerCredential(cfg.User, cfg.Group, identity{euid: euid, egid: os.Getegid(), canSwitch: canSwitchUser(euid)})
	if err != nil {
		return nil, fmt.Errorf("phppool: pool %q: %w", cfg.Name, err)
	}
	p := &Pool{
		cfg:  cfg,
		bin:  path,
		cred: cred,
		log:  log,
		done: make(chan struct{}),
		wake: make(chan struct{}),
	}
	if cfg.INIFile != "" {
		p.args = append(p.args, "-c", cfg.INIFile)
	}
	for _, kv := range cfg.INI {
		p.args = append(p.args, "-d", kv)
	}
	p.env = workerEnv(cfg.Env, os.LookupEnv)
	if cfg.Confine != nil {
		if p.confine, err = newConfinement(cfg.Confine, cfg, path); err != nil {
			return nil, fmt.Errorf("phppool: pool %q: %w", cfg.Name, err)
		}
	}
	if cfg.Engine == EngineSeparate {
		p.eng = separate{p}
	} else {
		p.eng = &master{p: p}
	}
	return p, nil
}

// workerEnv is a worker's environment from Config.Env: "NAME=value"
// as it is, "NAME" with lookup's value, if any. Never nil: a nil
// exec.Cmd.Env would hand the worker ramjet's whole environment.
func workerEnv(list []string, lookup func(string) (string, bool)) []string {
	env := make([]string, 0, len(list)+2)
	for _, kv := range list {
		if strings.Contains(kv, "=") {
			env = append(env, kv)
		} else if v, ok := lookup(kv); ok {
			env = append(env, kv+"="+v)
		}
	}
	return env
}

func withDefaults(cfg Config) Config {
	if cfg.Engine == "" {
		cfg.Engine = EngineShared
	}
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
	return cfg
}

// validate joins every problem in cfg and returns the binary's path.
func validate(cfg Config) (string, error) {
	var errs []error
	if cfg.Min < 0 || cfg.Max < 0 || cfg.Min > cfg.Max {
		errs = append(errs, fmt.Errorf("min %d, max %d: want 0 < min <= max", cfg.Min, cfg.Max))
	}
	if cfg.MaxRequests < 0 || cfg.MaxRSS < 0 {
		errs = append(errs, errors.New("max requests and max rss must not be negative"))
	}
	if cfg.IdleSuspend < 0 || cfg.IdleExit < 0 || cfg.QueueWait < 0 || cfg.RequestTimeout < 0 || cfg.SlowRequest < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	if cfg.Engine != EngineShared && cfg.Engine != EngineSeparate {
		errs = append(errs, fmt.Errorf("engine %q: want %q or %q", cfg.Engine, EngineShared, EngineSeparate))
	}
	if cfg.INIFile != "" {
		if st, err := os.Stat(cfg.INIFile); err != nil {
			errs = append(errs, fmt.Errorf("ini file: %w", err))
		} else if st.IsDir() {
			errs = append(errs, fmt.Errorf("ini file %s is a directory", cfg.INIFile))
		}
	}
	bin := cfg.Binary
	if bin == "" {
		bin = "php-cgi"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		errs = append(errs, err)
	}
	return path, errors.Join(errs...)
}

// Start spawns Min workers and starts the supervisor, which suspends and
// ends idle workers until ctx is done or Close. On error the caller still
// calls Close.
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
	socks, err := newSockets(p.cred, p.confine != nil)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("phppool: pool %q: %w", p.cfg.Name, err)
	}
	p.socks = socks
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
func (p *Pool) Close() (err error) {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		ws := p.workers
		p.workers, p.idle = nil, nil
		for _, w := range ws {
			w.retired = true
		}
		cancel := p.cancel
		p.broadcastLocked()
		p.mu.Unlock()
		close(p.done)
		if cancel != nil {
			cancel()
		}
		var workers sync.WaitGroup
		for _, w := range ws {
			// Requests in flight fail: their connections close first (no
			// spawn can take a connection any more, the pool is closed).
			w.closeConn()
			workers.Go(func() { w.terminate(killGrace) })
		}
		workers.Wait()
		p.eng.stop()
		p.wg.Wait()
		if p.socks != nil {
			err = p.socks.remove()
		}
		if p.confine != nil {
			p.confine.launcher.Close()
		}
	})
	return err
}

// Shutdown retires the pool gracefully, for a reload that swapped in a new
// one: idle workers are terminated now, busy ones after their request
// unless a queued Do takes them over, and Do calls that still arrive are
// served (spawning if needed) for at least drainLinger. Once that has passed and no worker is busy, or when ctx is
// done, it closes the pool. The error wraps ctx.Err() if ctx ended first.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.draining = true
	idle := p.idle
	p.idle = nil
	for _, w := range idle {
		p.retireLocked(w, false)
	}
	p.mu.Unlock()
	linger := time.NewTimer(drainLinger)
	defer linger.Stop()
	lingered := false
	for {
		p.mu.Lock()
		quiet, wake := p.busy == 0 || p.closed, p.wake
		p.mu.Unlock()
		if lingered && quiet {
			return p.Close()
		}
		select {
		case <-linger.C:
			lingered = true
		case <-wake:
		case <-ctx.Done():
			// Close cannot fail; the ctx error is the one to report.
			_ = p.Close()
			return fmt.Errorf("phppool: pool %q: shutdown: %w", p.cfg.Name, ctx.Err())
		}
	}
}
