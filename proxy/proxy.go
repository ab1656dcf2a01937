package proxy

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
)

// Proxy is the caching reverse proxy. Its handler is ServeFastHTTP.
type Proxy struct {
	cache *cache.Cache
	// private holds per-user entries (LSCache private responses and
	// private ESI fragments), keyed by identity; nil disables them.
	private *cache.Cache
	// privateUsed is set once the private cache has held an entry: the
	// request path's cheap stand-in for "not empty" (otter's size is a
	// sum over shards), wrong only once everything was evicted again,
	// which costs a lookup that misses.
	privateUsed atomic.Bool
	idSeed      maphash.Seed
	log         *slog.Logger
	metrics     *Metrics
	gen         atomic.Pointer[generation]
	// steps is the request path every entry runs (pipeline.go); set by
	// New, never changed while serving.
	steps   steps
	flights flights
	purger  Purger // set once before serving; nil = own cache only
	// sites is what each configured site keeps across reloads.
	sites *siteStates
	// htMemo is the remembered .htaccess evaluations of every site's
	// tree, in every generation: its size is the process's, not a
	// site's (htaccess.Memo).
	htMemo *htaccess.Memo
	// logs are the open access log files, shared by the generations
	// naming them; stop is closed by Close, ending the waits for retired
	// generations to drain.
	logs *accesslog.Files
	stop chan struct{}

	// reloadMu serialises Reload and Close.
	reloadMu sync.Mutex
	closed   bool

	// bgMu guards bgClosed; bg counts background refreshes.
	bgMu     sync.Mutex
	bgClosed bool
	bg       sync.WaitGroup
	// sampling is the stats sampler's goroutine, ended by stop.
	sampling sync.WaitGroup
	// gapRefreshes holds a token per refresh in flight of an entry a
	// fan-out gap left stale (refresh.go).
	gapRefreshes chan struct{}
	// warm is the warm-up after purges (warmup.go).
	warm warmer
}

// Stores are the long-lived caches a proxy serves from.
type Stores struct {
	Public *cache.Cache
	// Private keeps per-user entries apart, bounded on its own; nil
	// disables the private cache (private responses are then passed).
	Private *cache.Cache
	// NewShare makes the own cache of a site with a CacheSize, given the
	// site's label (its first name); nil: cache.New with the wall clock.
	// Closing the cache is the proxy's: it closes one no site uses any
	// more, and every one at Close.
	NewShare func(label string, size int64) (*cache.Cache, error)
}

// New builds a proxy serving cfg from the stores. Start begins its
// background work.
func New(cfg Config, st Stores, log *slog.Logger) (*Proxy, error) {
	p := &Proxy{cache: st.Public, private: st.Private, idSeed: maphash.MakeSeed(), log: log,
		metrics: newMetrics(st.Public), steps: newSteps(pipeline()),
		logs: accesslog.NewFiles(accesslog.Config{Log: log}), stop: make(chan struct{}),
		gapRefreshes: make(chan struct{}, maxGapRefreshes), htMemo: htaccess.NewMemo()}
	p.sites = newSiteStates(p.metrics.set, st.NewShare)
	g, err := p.build(cfg, nil)
	if err != nil {
		return nil, err
	}
	p.gen.Store(g)
	p.sites.commit(g)
	p.metrics.more = p.writePHPMetrics
	p.metrics.set.NewGauge("ramjet_access_log_dropped_total", func() float64 { return float64(p.logs.Dropped()) })
	if st.Private != nil {
		p.metrics.set.NewGauge("ramjet_private_cache_objects", func() float64 { return float64(st.Private.Len()) })
		p.metrics.set.NewGauge("ramjet_private_cache_bytes", func() float64 { return float64(st.Private.Bytes()) })
	}
	return p, nil
}

// Start starts the PHP pools of the first generation and its origin
// health checks, and the sampling of the sites' stats. On error the
// caller closes the proxy.
func (p *Proxy) Start(ctx context.Context) error {
	p.startSampling()
	return p.gen.Load().start(ctx)
}

// Metrics returns the proxy's metric set.
func (p *Proxy) Metrics() *Metrics { return p.metrics }

// Reload builds a generation from cfg and swaps it in; on error the
// current one keeps serving. In-flight requests finish on the generation
// they started with.
func (p *Proxy) Reload(ctx context.Context, cfg Config) error {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	if p.closed {
		return fmt.Errorf("proxy: reload after close")
	}
	old := p.gen.Load()
	g, err := p.build(cfg, old)
	if err != nil {
		return fmt.Errorf("proxy: reload: %w", err)
	}
	if err := g.start(ctx); err != nil {
		p.discard(g)
		return fmt.Errorf("proxy: reload: %w", err)
	}
	p.swap(old, g)
	return nil
}

// Close waits, within the drain timeout, for the docroots' requests and
// for the background refreshes and retiring generations, then stops the
// PHP workers and the health checks. Call it once the listeners are shut:
// it is for the end of the process. It is idempotent. The Stores are the
// caller's; the sites' own caches are closed here.
func (p *Proxy) Close() error {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	close(p.stop)
	g := p.gen.Load()
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.drainTimeout())
	defer cancel()
	for _, h := range g.docroots {
		if err := h.Close(ctx); err != nil {
			p.log.Warn("docroot drain", "err", err)
		}
	}
	p.bgMu.Lock()
	p.bgClosed = true
	p.bgMu.Unlock()
	p.bg.Wait()
	p.sampling.Wait()
	for _, pp := range g.pools {
		_ = pp.pool.Close() // shutting down: workers are killed either way
	}
	for _, c := range p.sites.shares() {
		_ = c.Close() // the sites' own caches are the proxy's
	}
	return errors.Join(p.closeLogs(ctx, g), g.pool.Close())
}

// closeLogs waits, within ctx, for the client requests still on g to
// write their lines, then closes every access log file.
func (p *Proxy) closeLogs(ctx context.Context, g *generation) error {
	if g.logging {
		g.stopEntering()
		select {
		case <-g.drained:
		case <-ctx.Done():
			p.log.Warn("closing the access logs with requests still running; their lines are dropped")
		}
	}
	return p.logs.Close()
}

// startBackground registers a background goroutine unless the proxy is
// closing; Close waits for every registered one.
func (p *Proxy) startBackground() bool {
	p.bgMu.Lock()
	defer p.bgMu.Unlock()
	if p.bgClosed {
		return false
	}
	p.bg.Add(1)
	return true
}
