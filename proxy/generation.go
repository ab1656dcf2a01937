package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
)

// A generation is everything a config change replaces: the compiled
// sites and the parts they use (the origin pool, the docroot sites'
// handlers and PHP pools, the sites' own caches, the access log writers).
// Its life, all in this file: build makes every part (on error it
// discards what it made), start starts those that run (on error the same
// discard), swap makes it current and retires the one it replaces, which
// closes what its successor does not use once its requests are done.
// discard is the one undo of a generation that never served: it works
// whatever point the build or start reached, as Caddy's Cleanup "works
// even if Provision returns an error".
//
// Parts whose config did not change are taken over from the generation
// it replaces (the origin pool and its warm connections, a PHP pool and
// its workers, a site's own cache, a log file still named): made lists
// the ones it made itself, the only ones discard closes.
type generation struct {
	cfg    Config
	router *router
	pool   *origin.Pool
	types  map[string]struct{} // compressible media types
	// pools are the PHP pools of the docroot sites, by site name.
	pools map[string]*phpPool
	// docroots are the handlers of the docroot sites, closed (waited
	// for) when the generation retires.
	docroots []*docroot.Handler
	made     made
	// goneShares are the sites' own caches its successor no longer uses,
	// closed when it retires.
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

// made is what a generation made rather than took over.
type made struct {
	pool  bool       // the origin pool is its own
	pools []*phpPool // its new PHP pools, started by start
	// shares are the sites' new own caches, kept by siteStates.commit
	// once it serves.
	shares map[*siteState]*cache.Cache
	// states are the labels of the site states it registered.
	states []string
}

// build makes the generation of cfg, taking over from old (nil: none)
// the parts whose config did not change. Nothing runs yet (start). On
// error what it made is discarded and old serves on.
func (p *Proxy) build(cfg Config, old *generation) (*generation, error) {
	if cfg.MaxObjectSize <= 0 {
		cfg.MaxObjectSize = 8 << 20
	}
	cfg.Origin.Retried = p.metrics.originRetries.Inc
	g := &generation{cfg: cfg, types: make(map[string]struct{}), pools: map[string]*phpPool{},
		drained: make(chan struct{})}
	for _, t := range cfg.Compress.Types {
		g.types[t] = struct{}{}
	}
	if err := p.assemble(g, old); err != nil {
		p.discard(g)
		return nil, err
	}
	return g, nil
}

// assemble gives g its router, its origin pool and every site its parts,
// recording on g what it takes as it goes; it reports every site's
// problem, not only the first.
func (p *Proxy) assemble(g *generation, old *generation) error {
	var err error
	if g.router, err = newRouter(g.cfg); err != nil {
		return err
	}
	if old != nil && sameOrigin(old.cfg.Origin, g.cfg.Origin) {
		g.pool = old.pool
	} else if g.pool, err = origin.New(g.cfg.Origin, p.log); err != nil {
		return fmt.Errorf("proxy: %w", err)
	} else {
		g.made.pool = true
	}
	b := &builder{p: p, g: g, old: old, logs: map[string]*accesslog.Writer{}}
	var errs []error
	for _, s := range g.router.sites() {
		if err := b.site(s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// builder assembles the sites of g, taking over from old; logs are the
// writers it took, by path.
type builder struct {
	p      *Proxy
	g, old *generation
	logs   map[string]*accesslog.Writer
}

// site gives s its parts: its state and cache (sitestate.go), its access
// log (logfiles.go), its upstream — the origin pool, or its docroot
// handler and PHP pool (php.go) — and its .htaccess rules.
func (b *builder) site(s *site) error {
	if err := b.p.sites.bind(s, b.p.cache, &b.g.made); err != nil {
		return err
	}
	if err := b.log(s); err != nil {
		return err
	}
	if s.Docroot != nil {
		return b.docroot(s)
	}
	s.up = originUpstream{b.g.pool}
	if b.g.pool != nil {
		s.setGauge(b.g.pool)
	}
	return b.proxyHtaccess(s)
}

// start starts the parts g made that run: its PHP pools' workers, then
// its origin pool's health checks. On error the caller discards g (or,
// for the first generation, closes the proxy).
func (g *generation) start(ctx context.Context) error {
	for _, pp := range g.made.pools {
		if err := pp.pool.Start(ctx); err != nil {
			return fmt.Errorf("proxy: php pool %s: %w", pp.cfg.Name, err)
		}
	}
	if g.made.pool {
		g.pool.Start(ctx)
	}
	return nil
}

// discard gives back what g, which never served, took: the parts it made
// are closed, the states it registered forgotten, its log writers
// released. Every field it reads may still be empty.
func (p *Proxy) discard(g *generation) {
	for _, h := range g.docroots {
		_ = h.Close(context.Background()) // never served: only its directory to release
	}
	for _, pp := range g.made.pools {
		_ = pp.pool.Close() // never served: nothing to report
	}
	if g.made.pool {
		_ = g.pool.Close() // never served: nothing to report
	}
	for _, c := range g.made.shares {
		_ = c.Close() // never used
	}
	p.sites.forget(g.made.states)
	p.releaseLogs(g)
}

// swap makes g, built and started, the current generation in place of
// old, whose requests finish on it: the site states take over g's sites,
// and old is retired.
func (p *Proxy) swap(old, g *generation) {
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

// retire lets the generation old, replaced by g, finish in the
// background, bounded by the drain timeout: its docroot handlers finish
// the requests they have, then the pools g does not use drain (their
// workers finish their requests, then exit). The goroutine is a
// background job Close waits for.
func (p *Proxy) retire(old, g *generation) {
	var gone []*phpPool
	for name, pp := range old.pools {
		if g.pools[name] != pp {
			gone = append(gone, pp)
		}
	}
	if !p.startBackground() {
		old.closeNow(gone)
		return
	}
	go func() {
		defer p.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), old.cfg.drainTimeout())
		defer cancel()
		old.drain(ctx, gone, p.log)
	}()
}

// drain waits for the docroots' requests, then shuts the pools down, all
// within ctx; what is left then is killed.
func (g *generation) drain(ctx context.Context, pools []*phpPool, log *slog.Logger) {
	for _, h := range g.docroots {
		if err := h.Close(ctx); err != nil {
			log.Warn("docroot drain", "err", err)
		}
	}
	for _, c := range g.goneShares {
		_ = c.Close() // no generation uses it any more
	}
	for _, pp := range pools {
		if err := pp.pool.Shutdown(ctx); err != nil {
			log.Warn("php pool drain", "pool", pp.cfg.Name, "err", err)
		}
	}
}

// closeNow kills the pools at once: the proxy is closing, and the errors
// have no one to go to.
func (g *generation) closeNow(pools []*phpPool) {
	for _, pp := range pools {
		_ = pp.pool.Close()
	}
	for _, c := range g.goneShares {
		_ = c.Close()
	}
}

// usersRetired is subtracted from a generation's users when it is
// replaced: the count goes negative, which turns new requests to the
// current generation, and reaches -usersRetired when the last one left.
const usersRetired = 1 << 62

// enter is the generation a client request starts on. While it logs,
// the request is counted, so that its files stay open until it left.
func (p *Proxy) enter() *generation {
	for {
		g := p.gen.Load()
		if !g.logging || g.users.Add(1) > 0 {
			return g
		}
		if p.gen.Load() == g {
			// Retired but still current: the proxy is closed, and a request
			// the listeners let through late keeps g (and the count, which
			// its leave gives back); its line is dropped and counted.
			return g
		}
		g.leave() // replaced meanwhile: start on the current one
	}
}

// leave ends a client request's use of g.
func (g *generation) leave() {
	if g.logging && g.users.Add(-1) == -usersRetired {
		g.drainedOnce.Do(func() { close(g.drained) })
	}
}

// stopEntering marks g replaced: new requests go to the current one, and
// drained closes when those on g have left.
func (g *generation) stopEntering() {
	if g.users.Add(-usersRetired) == -usersRetired {
		g.drainedOnce.Do(func() { close(g.drained) })
	}
}
