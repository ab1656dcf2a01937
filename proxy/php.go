package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
)

// Docroot serves a site from a directory with its own PHP pool.
type Docroot struct {
	docroot.Config
	// PHP is the site's worker pool; nil serves static files only.
	PHP *phppool.Config
}

// poolPHP is a site's pool as its docroot's PHP.
type poolPHP struct{ *phppool.Pool }

func (p poolPHP) Begin(ctx context.Context, params []phppool.Param, stdin io.Reader, stderr io.Writer) (docroot.Output, error) {
	r, err := p.Pool.Begin(ctx, params, stdin, stderr)
	if err != nil {
		return nil, err // not a nil *Response in a non-nil interface
	}
	return r, nil
}

// phpPool is a running pool and the config it was built from; the Proxy
// keeps it across reloads that leave its config unchanged.
type phpPool struct {
	cfg  phppool.Config // cfg.Name is the site's name
	pool *phppool.Pool
}

// buildDocroots gives each docroot site of g its handler, reusing the
// pools of old whose config did not change; new pools are listed in
// g.newPools, unstarted.
func (p *Proxy) buildDocroots(g *generation, old *generation) error {
	g.pools = map[string]*phpPool{}
	var errs []error
	for _, s := range g.router.sites() {
		if s.Docroot == nil {
			s.up = g.pool
			if g.pool != nil {
				s.setGauge(g.pool)
			}
			if err := p.proxyHtaccess(s); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		var php docroot.PHP
		if s.Docroot.PHP != nil {
			pp, err := p.poolFor(g, old, s)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			php = poolPHP{pp.pool}
			s.setGauge(pp.pool)
		}
		dc := s.Docroot.Config
		dc.Log = p.log.With("site", siteName(s))
		dc.ProxyOrigins = g.cfg.Origin.Servers
		h, err := docroot.New(dc, php, g.pool)
		if err != nil {
			errs = append(errs, fmt.Errorf("proxy: site %s: %w", siteName(s), err))
			continue
		}
		s.up, s.files, s.ht = h, h, h.Htaccess()
		g.docroots = append(g.docroots, h)
	}
	if err := errors.Join(errs...); err != nil {
		for _, h := range g.docroots {
			_ = h.Close(context.Background()) // never served: only its directory to release
		}
		g.closeNewPools()
		return err
	}
	return nil
}

// proxyHtaccess gives a proxy-mode site with an htaccess_root its tree
// of LiteSpeed cache rules.
func (p *Proxy) proxyHtaccess(s *site) error {
	if s.HtaccessRoot == "" {
		return nil
	}
	t, err := htaccess.NewTree(htaccess.Config{Root: s.HtaccessRoot, ProxyOnly: true, Log: p.log.With("site", siteName(s))})
	if err != nil {
		return fmt.Errorf("proxy: site %s: %w", siteName(s), err)
	}
	s.ht = t
	return nil
}

// poolFor returns the pool of s: the old generation's when its config is
// the same, else a new one.
func (p *Proxy) poolFor(g, old *generation, s *site) (*phpPool, error) {
	name := siteName(s)
	cfg := *s.Docroot.PHP
	cfg.Name = name
	if old != nil {
		if pp, ok := old.pools[name]; ok && reflect.DeepEqual(pp.cfg, cfg) {
			g.pools[name] = pp
			return pp, nil
		}
	}
	pool, err := phppool.New(cfg, p.log)
	if err != nil {
		return nil, fmt.Errorf("proxy: site %s: %w", name, err)
	}
	pp := &phpPool{cfg: cfg, pool: pool}
	g.pools[name] = pp
	g.newPools = append(g.newPools, pp)
	return pp, nil
}

// siteName names a site's pool in logs and metrics: its first host name.
func siteName(s *site) string {
	if len(s.Names) == 0 {
		return "default"
	}
	return s.Names[0]
}

// startPools starts the pools g created; on error all of them are closed.
func (g *generation) startPools(ctx context.Context) error {
	for _, pp := range g.newPools {
		if err := pp.pool.Start(ctx); err != nil {
			g.closeNewPools()
			return fmt.Errorf("proxy: php pool %s: %w", pp.cfg.Name, err)
		}
	}
	return nil
}

func (g *generation) closeNewPools() {
	for _, pp := range g.newPools {
		// A pool that never served has nothing to report on close.
		_ = pp.pool.Close()
	}
}

// retire lets the generation old, replaced by g, finish in the
// background, bounded by the drain timeout: its docroot handlers finish
// the requests they have, then the pools g does not use drain (their
// workers finish their requests, then exit). g nil retires everything.
// The goroutine is a background job Close waits for.
func (p *Proxy) retire(old, g *generation) {
	var gone []*phpPool
	for name, pp := range old.pools {
		if g == nil || g.pools[name] != pp {
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

// PoolStatus describes one PHP pool for the admin listener.
type PoolStatus struct {
	Name    string                 `json:"name"`
	Workers []phppool.WorkerStatus `json:"workers"`
	Master  phppool.MasterStatus   `json:"master"`
	Queued  int                    `json:"queued"` // requests waiting for a worker
	Stats   phppool.Stats          `json:"stats"`
}

// PHPStatus lists the PHP pools of the current configuration.
func (p *Proxy) PHPStatus() []PoolStatus {
	g := p.gen.Load()
	out := make([]PoolStatus, 0, len(g.pools))
	for _, pp := range g.pools {
		out = append(out, PoolStatus{Name: pp.cfg.Name, Workers: pp.pool.Status(), Master: pp.pool.Master(),
			Queued: pp.pool.Queued(), Stats: pp.pool.Stats()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
