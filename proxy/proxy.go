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
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
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
	// gapRefreshes holds a token per refresh in flight of an entry a
	// fan-out gap left stale (refresh.go).
	gapRefreshes chan struct{}
}

// generation is everything a config change replaces.
type generation struct {
	cfg    Config
	router *router
	pool   *origin.Pool
	types  map[string]struct{} // compressible media types
	// pools are the PHP pools of the docroot sites, by site name;
	// newPools the ones this generation created (not yet started).
	pools    map[string]*phpPool
	newPools []*phpPool
	// docroots are the handlers of the docroot sites, closed (waited
	// for) when the generation retires.
	docroots []*docroot.Handler
	// newShares are the sites' own caches this generation created, kept
	// when it starts serving (siteStates.commit); goneShares the ones its
	// successor no longer uses, closed when it retires.
	newShares  map[*siteState]*cache.Cache
	goneShares []*cache.Cache
	// logs are the access log writers its sites use, one per path
	// (logfiles.go); logging: there is at least one, and client requests
	// are counted in users until they leave, drained closing after the
	// generation was replaced and the last one left.
	logs        []*accesslog.Writer
	logging     bool
	users       atomic.Int64
	drained     chan struct{}
	drainedOnce sync.Once
}

// Stores are the long-lived caches a proxy serves from.
type Stores struct {
	Public *cache.Cache
	// Private keeps per-user entries apart, bounded on its own; nil
	// disables the private cache (private responses are then passed).
	Private *cache.Cache
	// NewShare makes the own cache of a site with a CacheSize; nil:
	// cache.New with the wall clock.
	NewShare func(size int64) (*cache.Cache, error)
}

// New builds a proxy serving cfg from the stores. Start begins its
// background work.
func New(cfg Config, st Stores, log *slog.Logger) (*Proxy, error) {
	p := &Proxy{cache: st.Public, private: st.Private, idSeed: maphash.MakeSeed(), log: log,
		metrics: newMetrics(st.Public), steps: newSteps(pipeline()),
		logs: accesslog.NewFiles(accesslog.Config{Log: log}), stop: make(chan struct{}),
		gapRefreshes: make(chan struct{}, maxGapRefreshes)}
	p.sites = newSiteStates(p.metrics.set, st.NewShare)
	g, err := p.newGeneration(cfg, nil)
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

// Start begins the origin health checks of the current generation and
// starts its PHP pools.
func (p *Proxy) Start(ctx context.Context) error {
	g := p.gen.Load()
	g.pool.Start(ctx)
	return g.startPools(ctx)
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
	g, err := p.newGeneration(cfg, old)
	if err != nil {
		return fmt.Errorf("proxy: reload: %w", err)
	}
	if err := g.startPools(ctx); err != nil {
		if g.pool != old.pool {
			_ = g.pool.Close() // never started serving; nothing to report
		}
		g.discardShares()
		p.releaseLogs(g)
		return fmt.Errorf("proxy: reload: %w", err)
	}
	if g.pool != old.pool {
		g.pool.Start(ctx)
	}
	p.gen.Store(g)
	old.goneShares = p.sites.commit(g)
	p.retire(old, g)
	p.retireLogs(old)
	if g.pool != old.pool {
		if err := old.pool.Close(); err != nil {
			// Swapped already: the reload took effect, whatever the old
			// health checks said on their way out.
			p.log.Warn("closing the replaced origin pool", "err", err)
		}
	}
	return nil
}

// newGeneration compiles cfg, keeping the origin pool (and its warm
// connections) when the origin settings did not change.
func (p *Proxy) newGeneration(cfg Config, old *generation) (*generation, error) {
	if cfg.MaxObjectSize <= 0 {
		cfg.MaxObjectSize = 8 << 20
	}
	cfg.Origin.Retried = p.metrics.originRetries.Inc
	r, err := newRouter(cfg)
	if err != nil {
		return nil, err
	}
	g := &generation{cfg: cfg, router: r, types: make(map[string]struct{}), drained: make(chan struct{})}
	for _, t := range cfg.Compress.Types {
		g.types[t] = struct{}{}
	}
	if err := p.openLogs(g); err != nil {
		return nil, err
	}
	if old != nil && sameOrigin(old.cfg.Origin, cfg.Origin) {
		g.pool = old.pool
	} else if g.pool, err = origin.New(cfg.Origin, p.log); err != nil {
		p.releaseLogs(g)
		return nil, fmt.Errorf("proxy: %w", err)
	}
	err = p.sites.bind(g, p.cache)
	if err == nil {
		err = p.buildDocroots(g, old)
	}
	if err != nil {
		if old == nil || g.pool != old.pool {
			_ = g.pool.Close() // never started; nothing to report
		}
		g.discardShares()
		p.releaseLogs(g)
		return nil, err
	}
	return g, nil
}

func sameOrigin(a, b origin.Config) bool {
	if len(a.Servers) != len(b.Servers) {
		return false
	}
	for i := range a.Servers {
		if a.Servers[i] != b.Servers[i] {
			return false
		}
	}
	a.Servers, b.Servers = nil, nil
	return a.ConnectTimeout == b.ConnectTimeout && a.HeaderTimeout == b.HeaderTimeout &&
		a.BodyTimeout == b.BodyTimeout && a.IdleTimeout == b.IdleTimeout &&
		a.MaxConns == b.MaxConns && a.MaxQueue == b.MaxQueue && a.Health == b.Health
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
