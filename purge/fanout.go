package purge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// FanoutConfig configures the Redis Streams fan-out. Zero values take the
// documented defaults; URL and Node are required.
type FanoutConfig struct {
	// URL is the Redis URL, e.g. redis://127.0.0.1:6379/0 (go-redis
	// ParseURL syntax, so rediss:// and ?dial_timeout= work too); with
	// master_name=NAME it names Redis Sentinels instead (host and addr=
	// parameters), which find the master and follow its failover.
	URL string
	// Node names this node in every entry it publishes. Unique per node;
	// the caller computes the default (hostname:port). Its echo is told
	// by the process too (Fanout.proc): the two processes of an upgrade
	// share the name and must apply each other's purges.
	Node string
	// Stream is the stream key. Default "ramjet:purge". The epoch key is
	// Stream + ":epoch".
	Stream string
	// MaxLen is the approximate length the stream is trimmed to on every
	// XADD (MAXLEN ~). Default 100000. A node that falls further behind than
	// this treats it as a gap (Gap).
	MaxLen int64
	// Queue bounds the purges waiting to be published while Redis is
	// unreachable. Default 10000. On overflow the queue collapses into one
	// gap command: the other nodes apply their gap policy rather than
	// miss a purge; this node, which applied everything locally, does not.
	Queue int
	// DrainTimeout bounds how long Close keeps trying to publish what is
	// still queued. Default 1s.
	DrainTimeout time.Duration
	// Gap is what a node does when it may have missed purges it cannot
	// name (Redis restarted without its data, the stream trimmed past it,
	// Redis unreachable at start): GapStale (the zero value) serves every
	// entry it holds stale while one request refreshes it, for at most
	// GapGrace; GapFlush empties the cache.
	Gap GapPolicy
	// GapGrace bounds how long an entry is served stale after a gap.
	// Default 10s.
	GapGrace time.Duration
	// Resume, when set, is where a previous run stopped (Position): the
	// subscriber reads on from there instead of from the stream's end.
	Resume *Position
}

// GapPolicy says what a fan-out gap does to the local cache.
type GapPolicy uint8

const (
	// GapStale marks every entry stale for GapGrace, then gone.
	GapStale GapPolicy = iota
	// GapFlush empties the cache at once.
	GapFlush
)

// Command is the purge of everything p applies for purges nobody can
// name: every entry stale for grace (0: the default 10 s), then gone;
// or, GapFlush, gone at once.
func (p GapPolicy) Command(grace time.Duration) Command {
	if p == GapFlush {
		return flushAll()
	}
	if grace <= 0 {
		grace = defaultGapGrace
	}
	cmd := gapAll()
	cmd.Grace = grace
	return cmd
}

const (
	defaultStream       = "ramjet:purge"
	defaultMaxLen       = 100000
	defaultQueue        = 10000
	defaultDrainTimeout = time.Second
	defaultGapGrace     = 10 * time.Second

	// readBlock is how long one XREAD waits for entries; the subscriber
	// re-checks its context in between.
	readBlock = time.Second
	// readCount bounds the entries one XREAD returns.
	readCount = 1000
	// publishBatch bounds the XADDs sent in one pipeline.
	publishBatch = 512

	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

var (
	errStarted = errors.New("purge: fanout already started")
	errClosed  = errors.New("purge: fanout closed")
)

// flushAll purges everything at once.
func flushAll() Command { return Command{Targets: []Target{{Kind: KindAll}}} }

// gapAll is the command a node publishes when it dropped purges it could
// not publish: each receiving node applies its own gap policy.
func gapAll() Command { return Command{Targets: []Target{{Kind: KindAll, Soft: true}}, Gap: true} }

// Fanout carries purges to the other nodes through a Redis stream and
// applies theirs to the local cache. It owns two goroutines, started by
// Start and joined by Close: a publisher that XADDs queued purges and a
// subscriber that XREADs everyone's.
type Fanout struct {
	cfg   FanoutConfig
	local Invalidator
	log   *slog.Logger
	epKey string
	// proc tells this Fanout's entries from those of another process of
	// the node (echo).
	proc string

	pub *redis.Client // publisher's connections
	sub *redis.Client // subscriber's; closed by Close to end a blocked XREAD

	wake chan struct{} // publisher wake-up, capacity 1

	qmu     sync.Mutex // guards queue, qgen, dropped
	queue   fifo       // purges not yet published
	qgen    uint64     // bumped when the queue collapses on overflow
	dropped int64      // purges dropped since the publisher last logged it

	life   sync.Mutex // serialises Start and Close; guards start, cancel
	cancel context.CancelFunc
	wg     sync.WaitGroup
	start  bool
	closed atomic.Bool

	subUp  atomic.Bool // subscriber positioned and its last read succeeded
	pubUp  atomic.Bool // publisher's last attempt succeeded (or none failed)
	everUp atomic.Bool // subscriber has been positioned at least once

	// cur is the subscriber's position, pending a gap noticed but not yet
	// applied. Owned by the subscriber goroutine while it runs.
	cur     cursor
	pending *gapReason

	keys   atomic.Pointer[keyring] // sign with the first, verify with any
	rej    rejections              // owned by the subscriber goroutine
	recent recentSigs              // owned by the subscriber goroutine

	m fanoutMetrics
	// caught is closed once the subscriber is at the stream's end.
	caught caughtUp
}

type pending struct {
	cmd Command
	ts  int64 // unix nanos when Publish was called
}

type fanoutMetrics struct {
	lag                         *metrics.Histogram
	flushes, published, applied *metrics.Counter
	dropped, unverified, copies *metrics.Counter
	// set registers the gaps counter of each reason on first use.
	set *metrics.Set
}

// NewFanout validates cfg and prepares the Redis clients; it does not
// connect. local receives the other nodes' purges and must be safe for
// concurrent use. log and m may be nil. One Fanout per metrics set.
func NewFanout(cfg FanoutConfig, local Invalidator, log *slog.Logger, m *metrics.Set) (*Fanout, error) {
	if local == nil {
		return nil, errors.New("purge: fanout needs an Invalidator")
	}
	if cfg.Node == "" {
		return nil, errors.New("purge: fanout needs a node name")
	}
	client, err := clientMaker(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Stream == "" {
		cfg.Stream = defaultStream
	}
	if cfg.MaxLen <= 0 {
		cfg.MaxLen = defaultMaxLen
	}
	if cfg.Queue <= 0 {
		cfg.Queue = defaultQueue
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = defaultDrainTimeout
	}
	if cfg.GapGrace <= 0 {
		cfg.GapGrace = defaultGapGrace
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if m == nil {
		m = metrics.NewSet()
	}
	f := &Fanout{
		cfg:   cfg,
		local: local,
		log:   log.With("component", "purge-fanout", "node", cfg.Node),
		epKey: cfg.Stream + ":epoch",
		pub:   client(4),
		// go-redis gives the blocking XREAD a read timeout of its block
		// plus 10s; every other command has ReadTimeout.
		sub:    client(2),
		wake:   make(chan struct{}, 1),
		caught: newCaughtUp(),
		proc:   newProc(),
	}
	if cfg.Resume != nil {
		if err := f.resumeAt(cfg.Resume); err != nil {
			return nil, err
		}
	}
	f.pubUp.Store(true)
	f.SetKeys(nil) // until the caller's SetKeys: unsigned
	f.m = fanoutMetrics{
		lag:       m.GetOrCreateHistogram("ramjet_purge_fanout_lag_seconds"),
		flushes:   m.GetOrCreateCounter("ramjet_purge_fanout_flushes_total"),
		published: m.GetOrCreateCounter("ramjet_purge_fanout_published_total"),
		applied:   m.GetOrCreateCounter("ramjet_purge_fanout_applied_total"),
		dropped:   m.GetOrCreateCounter("ramjet_purge_fanout_dropped_total"),
		set:       m,
		// entries ignored because no key verifies them (sign.go)
		unverified: m.GetOrCreateCounter("ramjet_purge_fanout_unverified_total"),
		copies:     m.GetOrCreateCounter("ramjet_purge_fanout_copies_total"),
	}
	m.GetOrCreateGauge("ramjet_purge_fanout_queue", func() float64 { return float64(f.queued()) })
	m.GetOrCreateGauge("ramjet_redis_connected", func() float64 {
		if f.State() == StateConnected {
			return 1
		}
		return 0
	})
	return f, nil
}

// clientMaker returns what makes the fan-out's Redis clients for url,
// each with its own pool of n connections: a plain client, or one that
// finds the master through Redis Sentinel when the URL names it
// (redis://sentinel:26379/0?master_name=NAME&addr=sentinel2:26379), and
// follows a failover to the promoted replica, which has the stream and the
// epoch key: a failover is no gap, but for the entries the replica had
// not received yet (then the stream's last ID goes backwards: a gap).
func clientMaker(url string) (func(n int) *redis.Client, error) {
	if strings.Contains(url, "master_name=") {
		fo, err := redis.ParseFailoverURL(url)
		if err != nil {
			return nil, fmt.Errorf("purge: redis sentinel url: %w", err)
		}
		return func(n int) *redis.Client { return redis.NewFailoverClient(failoverOptions(*fo, n)) }, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("purge: redis url: %w", err)
	}
	return func(n int) *redis.Client { return redis.NewClient(clientOptions(*opt, n)) }, nil
}

// failoverOptions is clientOptions for a client through Sentinel.
func failoverOptions(opt redis.FailoverOptions, pool int) *redis.FailoverOptions {
	opt.MaxRetries = -1
	opt.DialerRetries = 1
	opt.DialTimeout = cmp.Or(opt.DialTimeout, 2*time.Second)
	opt.ReadTimeout = cmp.Or(opt.ReadTimeout, 3*time.Second)
	opt.WriteTimeout = cmp.Or(opt.WriteTimeout, 3*time.Second)
	opt.PoolSize = pool
	return &opt
}

// clientOptions sets what the fan-out relies on over what the URL says:
// errors surface at once (the loops retry with their own backoff), no
// background maintenance machinery, bounded dials and reads.
func clientOptions(opt redis.Options, pool int) *redis.Options {
	opt.MaxRetries = -1
	opt.DialerRetries = 1
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 2 * time.Second
	}
	if opt.ReadTimeout <= 0 {
		opt.ReadTimeout = 3 * time.Second
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 3 * time.Second
	}
	opt.PoolSize = pool
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return &opt
}

// Start starts the publisher and the subscriber. It does not wait for
// Redis: the node runs, and applies its own purges, whether or not Redis
// is reachable. Call it before the node serves traffic: a node joins the
// stream at its end, assuming an empty cache.
func (f *Fanout) Start(ctx context.Context) error {
	f.life.Lock()
	defer f.life.Unlock()
	if f.closed.Load() {
		return errClosed
	}
	if f.start {
		return errStarted
	}
	f.start = true
	ctx, f.cancel = context.WithCancel(ctx)
	f.wg.Add(2)
	go f.runPublisher(ctx)
	go f.runSubscriber(ctx)
	return nil
}

// Close stops both goroutines and waits for them. The publisher first
// tries, for up to DrainTimeout, to publish what is still queued. Close is
// idempotent.
func (f *Fanout) Close() error {
	f.life.Lock()
	defer f.life.Unlock()
	if f.closed.Swap(true) {
		return nil
	}
	if f.cancel != nil {
		f.cancel()
	}
	// Closing the subscriber's client ends an XREAD blocked in Redis.
	errSub := f.sub.Close()
	f.wg.Wait()
	errPub := f.pub.Close()
	if err := errors.Join(errSub, errPub); err != nil {
		return fmt.Errorf("purge: close fanout: %w", err)
	}
	return nil
}

// Publish queues cmd for the other nodes and returns at once; the
// publisher goroutine XADDs it, retrying until Redis accepts. cmd must not
// be modified afterwards. After Close it is dropped.
func (f *Fanout) Publish(cmd Command) {
	if f.closed.Load() {
		f.m.dropped.Inc()
		return
	}
	p := pending{cmd: cmd, ts: time.Now().UnixNano()}
	f.qmu.Lock()
	if n := f.queue.len(); n >= f.cfg.Queue {
		// Drop everything queued and send the other nodes a gap instead:
		// it covers every dropped purge.
		f.queue.reset()
		f.queue.push(pending{cmd: gapAll(), ts: p.ts})
		f.qgen++
		f.dropped += int64(n)
		f.m.dropped.Add(n)
	}
	f.queue.push(p)
	f.qmu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// States reported by State.
const (
	StateConnecting   = "connecting"   // not yet positioned in the stream
	StateConnected    = "connected"    // reading and publishing
	StateDisconnected = "disconnected" // retrying; purges apply locally and queue
	StateClosed       = "closed"
)

// State says how the fan-out is doing, for /healthz. It never fails the
// node: while Redis is away purges still apply locally.
func (f *Fanout) State() string {
	switch {
	case f.closed.Load():
		return StateClosed
	case !f.everUp.Load():
		return StateConnecting
	case f.subUp.Load() && f.pubUp.Load():
		return StateConnected
	default:
		return StateDisconnected
	}
}

func (f *Fanout) queued() int {
	f.qmu.Lock()
	defer f.qmu.Unlock()
	return f.queue.len()
}

// runPublisher publishes queued purges in order until ctx ends, then
// drains what it can.
func (f *Fanout) runPublisher(ctx context.Context) {
	defer f.wg.Done()
	defer f.drain(ctx)
	var (
		bo    backoff
		batch []pending
		args  []any
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		for {
			var gen uint64
			batch, gen = f.take(batch[:0])
			if len(batch) == 0 {
				break
			}
			err := f.xadd(ctx, batch, &args)
			f.reportDropped()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if f.pubUp.Swap(false) {
					f.log.Warn("redis: cannot publish purges, retrying", "err", err, "queued", f.queued())
				}
				if !bo.wait(ctx) {
					return
				}
				continue
			}
			if !f.pubUp.Swap(true) {
				f.log.Info("redis: publishing purges again")
			}
			bo.reset()
			f.ack(len(batch), gen)
		}
	}
}

// take copies up to publishBatch queued purges into buf, oldest first.
func (f *Fanout) take(buf []pending) ([]pending, uint64) {
	f.qmu.Lock()
	defer f.qmu.Unlock()
	return f.queue.peek(buf, publishBatch), f.qgen
}

// ack removes the n purges just published, unless the queue collapsed
// meanwhile (they are then already gone, replaced by a flush).
func (f *Fanout) ack(n int, gen uint64) {
	f.qmu.Lock()
	defer f.qmu.Unlock()
	if gen != f.qgen {
		return
	}
	f.queue.pop(n)
}

// fifo is a queue of pending purges. It is not synchronised.
type fifo struct {
	buf  []pending
	head int // buf[:head] are popped
}

func (q *fifo) len() int { return len(q.buf) - q.head }

func (q *fifo) push(p pending) { q.buf = append(q.buf, p) }

// peek appends up to n of the oldest purges to dst.
func (q *fifo) peek(dst []pending, n int) []pending {
	return append(dst, q.buf[q.head:q.head+min(n, q.len())]...)
}

// pop removes the n oldest purges. Moving the rest down only once half of
// buf is popped keeps it amortised O(1).
func (q *fifo) pop(n int) {
	clear(q.buf[q.head : q.head+n])
	q.head += n
	if q.head >= len(q.buf)/2 {
		k := copy(q.buf, q.buf[q.head:])
		clear(q.buf[k:])
		q.buf, q.head = q.buf[:k], 0
	}
}

func (q *fifo) reset() {
	clear(q.buf)
	q.buf, q.head = q.buf[:0], 0
}

func (f *Fanout) reportDropped() {
	f.qmu.Lock()
	n := f.dropped
	f.dropped = 0
	f.qmu.Unlock()
	if n > 0 {
		f.log.Warn("purge queue overflowed while Redis was unreachable; other nodes will treat it as a gap",
			"dropped", n, "queue", f.cfg.Queue)
	}
}

// xadd publishes batch in one pipeline. On error the whole batch is
// retried: an entry published twice is applied twice, which is harmless.
func (f *Fanout) xadd(ctx context.Context, batch []pending, args *[]any) error {
	pipe := f.pub.Pipeline()
	for _, p := range batch {
		body, err := json.Marshal(p.cmd)
		if err != nil { // cannot happen: Command holds strings, ints and bools
			f.log.Error("purge: encode command", "err", err)
			continue
		}
		// XAdd copies Values into the command, so args is reused.
		*args = f.entryValues(*args, p, body)
		pipe.XAdd(ctx, &redis.XAddArgs{
			Stream: f.cfg.Stream,
			MaxLen: f.cfg.MaxLen,
			Approx: true,
			ID:     "*",
			Values: *args,
		})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("purge: xadd %s: %w", f.cfg.Stream, err)
	}
	f.m.published.Add(len(batch))
	return nil
}

// drain publishes what is still queued, for up to DrainTimeout, when the
// publisher stops. What remains is lost to the other nodes, and logged.
func (f *Fanout) drain(parent context.Context) {
	if f.queued() == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), f.cfg.DrainTimeout)
	defer cancel()
	var (
		bo    backoff
		batch []pending
		args  []any
	)
	for {
		var gen uint64
		batch, gen = f.take(batch[:0])
		if len(batch) == 0 {
			return
		}
		if err := f.xadd(ctx, batch, &args); err != nil {
			if !bo.wait(ctx) {
				f.log.Error("purges not published before shutdown; other nodes miss them",
					"lost", f.queued(), "err", err)
				return
			}
			continue
		}
		f.ack(len(batch), gen)
	}
}

// backoff is a jittered exponential delay between retries.
type backoff struct{ d time.Duration }

func (b *backoff) reset() { b.d = 0 }

// wait sleeps for the next delay; false if ctx ended first.
func (b *backoff) wait(ctx context.Context) bool {
	b.d = min(max(2*b.d, minBackoff), maxBackoff)
	d := b.d/2 + rand.N(b.d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// RedisLogger adapts a slog.Logger to go-redis's process-wide logger.
// go-redis logs every failed dial to stderr, which the fan-out already
// reports once per outage; cmd should install this once, before any
// Fanout starts: redis.SetLogger(purge.RedisLogger{Log: log}).
type RedisLogger struct{ Log *slog.Logger }

// Printf logs at debug level.
func (l RedisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.Log.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
