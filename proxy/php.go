package proxy

import (
	"context"
	"fmt"
	"io"
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

// docroot gives the docroot site s its handler, with its PHP pool
// (poolFor) when it runs scripts.
func (b *builder) docroot(s *site) error {
	var php docroot.PHP
	if s.Docroot.PHP != nil {
		pp, err := b.poolFor(s)
		if err != nil {
			return err
		}
		php = poolPHP{pp.pool}
		s.setGauge(pp.pool)
	}
	dc := s.Docroot.Config
	dc.Log = b.p.log.With("site", siteName(s))
	dc.ProxyOrigins = b.g.cfg.Origin.Servers
	dc.HtaccessMemo = b.p.htMemo
	h, err := docroot.New(dc, php, b.g.pool)
	if err != nil {
		return fmt.Errorf("proxy: site %s: %w", siteName(s), err)
	}
	b.g.docroots = append(b.g.docroots, h)
	s.up, s.ht = docrootUpstream{h}, h.Htaccess()
	return nil
}

// proxyHtaccess gives a proxy-mode site with an htaccess_root its tree
// of LiteSpeed cache rules.
func (b *builder) proxyHtaccess(s *site) error {
	if s.HtaccessRoot == "" {
		return nil
	}
	t, err := htaccess.NewTree(htaccess.Config{Root: s.HtaccessRoot, ProxyOnly: true, Log: b.p.log.With("site", siteName(s)), Memo: b.p.htMemo})
	if err != nil {
		return fmt.Errorf("proxy: site %s: %w", siteName(s), err)
	}
	s.ht = t
	return nil
}

// poolFor returns the pool of s: the old generation's when its config is
// the same, else a new one, unstarted, listed in made.pools.
func (b *builder) poolFor(s *site) (*phpPool, error) {
	name := siteName(s)
	cfg := *s.Docroot.PHP
	cfg.Name = name
	if b.old != nil {
		if pp, ok := b.old.pools[name]; ok && reflect.DeepEqual(pp.cfg, cfg) {
			b.g.pools[name] = pp
			return pp, nil
		}
	}
	pool, err := phppool.New(cfg, b.p.log)
	if err != nil {
		return nil, fmt.Errorf("proxy: site %s: %w", name, err)
	}
	pp := &phpPool{cfg: cfg, pool: pool}
	b.g.pools[name] = pp
	b.g.made.pools = append(b.g.made.pools, pp)
	return pp, nil
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
