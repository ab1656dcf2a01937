package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/proxy"
	"github.com/ramjet-proxy/ramjet/proxy/certs"
	"github.com/ramjet-proxy/ramjet/proxy/h2"
	"github.com/ramjet-proxy/ramjet/proxy/h3"
	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
)

// tlsFlags are the command-line flags of the TLS and h2c listeners.
type tlsFlags struct {
	listen, cert, key, h2cListen string
	http3                        bool
}

func (f *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.listen, "tls-listen", "", "HTTPS listener address (HTTP/2 and HTTP/1.1 by ALPN), overrides tls.listen")
	fs.StringVar(&f.cert, "tls-cert", "", "default certificate chain (PEM), overrides tls.cert")
	fs.StringVar(&f.key, "tls-key", "", "key of the default certificate (PEM), overrides tls.key")
	fs.BoolVar(&f.http3, "http3", false, "also serve HTTP/3 (QUIC, UDP) on the TLS listener's port, sets tls.http3")
	fs.StringVar(&f.h2cListen, "h2c-listen", "", "plain listener that also takes HTTP/2 with prior knowledge, overrides h2c.listen")
}

func (f tlsFlags) apply(c *conf.Config) {
	if f.listen != "" {
		c.TLS.Listen = f.listen
	}
	if f.cert != "" {
		c.TLS.Cert = f.cert
	}
	if f.key != "" {
		c.TLS.Key = f.key
	}
	if f.h2cListen != "" {
		c.H2C.Listen = f.h2cListen
	}
	if f.http3 {
		c.TLS.HTTP3 = true
	}
}

// edge is what serves clients besides the main listener: the TLS
// listener with its certificate store, and the h2c listener. Each is nil
// when not configured; methods work on a nil *edge.
type edge struct {
	log    *slog.Logger
	tlsCfg conf.TLS                    // settings the store was built from
	store  atomic.Pointer[certs.Store] // replaced when the certificate settings change
	tls    *h2.Server
	h2c    *h2.Server
	h3     *h3.Server      // HTTP/3 on the TLS listener's port; nil when off
	alt    string          // the Alt-Svc value advertising h3, "" when off
	ctx    context.Context // parent of the stores' watchers
}

// startEdge starts the certificate store and the TLS, HTTP/3 and h2c
// listeners the config asks for, all serving p.ServeFastHTTP; HTTP/2
// streams that p.ServeHit can answer at once (cache hits) are answered
// on their connection's goroutine. Every TLS handshake is counted in
// p's metrics.
func startEdge(ctx context.Context, c *conf.Config, p *proxy.Proxy, h fasthttp.RequestHandler, socks *sockets,
	pp func(conf.ProxyProtocol, string) *proxyproto.Config, log *slog.Logger) (*edge, error) {
	if c.TLS.Listen == "" && c.H2C.Listen == "" {
		return nil, nil
	}
	inline := p.ServeHit
	e := &edge{log: log, ctx: ctx}
	if c.TLS.Listen != "" {
		store, err := newStore(ctx, c.TLS, log)
		if err != nil {
			return nil, err
		}
		e.tlsCfg = c.TLS
		e.store.Store(store)
		tc := store.TLSConfig()
		tc.GetCertificate = e.getCertificate
		tc.VerifyConnection = p.Metrics().Handshake
		cfg := listenerConfig(c, "tls", c.TLS.Listen, tc)
		cfg.Inline, cfg.ProxyProtocol = inline, pp(c.TLS.ProxyProtocol, "tls")
		if cfg.Listener, err = socks.listenTCP(ctx, c.TLS.Listen, cfg.IdleTimeout); err != nil {
			return nil, errors.Join(fmt.Errorf("tls listener: %w", err), store.Close())
		}
		e.tls, err = startH2(ctx, cfg, h, p, log)
		if err != nil {
			return nil, errors.Join(err, store.Close())
		}
		if c.TLS.HTTP3 {
			if e.h3, err = startH3(ctx, c, tc, p, socks, log); err != nil {
				return nil, errors.Join(err, e.shutdown(ctx))
			}
			e.alt = altSvc(c)
		}
	}
	if c.H2C.Listen != "" {
		cfg := listenerConfig(c, "h2c", c.H2C.Listen, nil)
		cfg.H2C, cfg.BehindTLS = true, c.H2C.BehindTLS
		cfg.Inline, cfg.ProxyProtocol = inline, pp(c.H2C.ProxyProtocol, "h2c")
		var err error
		if cfg.Listener, err = socks.listenTCP(ctx, c.H2C.Listen, cfg.IdleTimeout); err != nil {
			return nil, errors.Join(fmt.Errorf("h2c listener: %w", err), e.shutdown(ctx))
		}
		if c.H2C.BehindTLS && cfg.ProxyProtocol == nil && len(c.RealIP.From) == 0 {
			log.Warn("h2c.behind_tls without h2c.proxy_protocol or real_ip: every request has the terminator's address, "+
				"which is trusted for nothing (PURGE over h2c is refused); have the terminator send PROXY or X-Forwarded-For and trust only it",
				"h2c", c.H2C.Listen)
		}
		if e.h2c, err = startH2(ctx, cfg, h, p, log); err != nil {
			return nil, errors.Join(err, e.shutdown(ctx))
		}
	}
	return e, nil
}

func newStore(ctx context.Context, c conf.TLS, log *slog.Logger) (*certs.Store, error) {
	cfg := certs.Config{
		Default:     certs.Pair{CertFile: c.Cert, KeyFile: c.Key},
		DisableOCSP: !c.OCSP,
		OCSPTimeout: time.Duration(c.OCSPTimeout),
	}
	for _, h := range c.Hosts {
		cfg.Hosts = append(cfg.Hosts, certs.Pair{Names: h.Names, CertFile: h.Cert, KeyFile: h.Key})
	}
	store, err := certs.New(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := store.Start(ctx); err != nil {
		return nil, err
	}
	return store, nil
}

// startH2 starts an HTTP/2 listener, its connection counts in p's
// metrics beside the main listener's and the HTTP/1.1 requests it
// refuses in p's access logs.
func startH2(ctx context.Context, cfg h2.Config, h fasthttp.RequestHandler, p *proxy.Proxy, log *slog.Logger) (*h2.Server, error) {
	cfg.ErrorHandler = p.ErrorHandler
	s, err := h2.NewServer(cfg, h, log)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	proxy.RegisterConnMetrics(p.Metrics().Set(), cfg.Name, s.Listener())
	return s, nil
}

// listenerConfig gives a TLS or h2c listener the limits and timeouts of
// the main one: header_timeout bounds the TLS handshake, then an
// HTTP/1.1 header or the HTTP/2 preface.
func listenerConfig(c *conf.Config, name, addr string, tc *tls.Config) h2.Config {
	read, headerReceived := proxy.ReadTimeouts(time.Duration(c.Server.HeaderTimeout), time.Duration(c.Server.ReadTimeout))
	return h2.Config{
		Name:                 name,
		Addr:                 addr,
		TLS:                  tc,
		ReadTimeout:          read,
		HeaderReceived:       headerReceived,
		WriteTimeout:         time.Duration(c.Server.WriteTimeout),
		IdleTimeout:          time.Duration(c.Server.IdleTimeout),
		MaxHeaderBytes:       int(c.Server.MaxHeaderBytes),
		MaxConns:             c.Server.MaxConns,
		MaxConnsPerIP:        c.Server.MaxConnsPerIP,
		MaxConcurrentStreams: uint32(c.TLS.H2MaxStreams),
		ErrorHandler:         proxy.ErrorHandler,
		WriteBufferSize:      proxy.WriteBufferSize,
		Park:                 c.Server.ParkIdle, // the h2c listener's HTTP/1.1; TLS ignores it
	}
}

// getCertificate asks the current store, so that a store replaced on
// reload serves the next handshake.
func (e *edge) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	return e.store.Load().GetCertificate(hello)
}

// certReload is a config reload's certificates, loaded and not serving
// yet: commit swaps them in, abort drops them. A nil *certReload (no TLS
// listener) does nothing.
type certReload struct {
	e      *edge
	cfg    conf.TLS
	store  *certs.Store  // a started store for changed settings, or nil
	staged *certs.Staged // the running store's files read again, or nil
}

// prepareReload loads c's certificates without serving them. Changed
// settings build and start a new store; unchanged ones read the running
// store's files again. Either way a pair that does not load fails the
// config reload, which then keeps every certificate serving as it was.
func (e *edge) prepareReload(c *conf.Config) (*certReload, error) {
	if e == nil || e.tls == nil || c.TLS.Listen == "" {
		return nil, nil // a listener added or removed waits for the restart
	}
	r := &certReload{e: e, cfg: c.TLS}
	var err error
	if sameCertSettings(e.tlsCfg, c.TLS) {
		r.staged, err = e.store.Load().Stage()
	} else {
		r.store, err = newStore(e.ctx, c.TLS, e.log)
	}
	if err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	return r, nil
}

// sameCertSettings reports whether a and b name the same certificates,
// when a reload keeps the running store (its watcher and its staples).
func sameCertSettings(a, b conf.TLS) bool {
	return reflect.DeepEqual(a.Hosts, b.Hosts) && a.Cert == b.Cert && a.Key == b.Key &&
		a.OCSP == b.OCSP && a.OCSPTimeout == b.OCSPTimeout
}

// commit serves the loaded certificates and closes a replaced store.
func (r *certReload) commit() {
	if r == nil {
		return
	}
	if r.staged != nil {
		r.staged.Commit()
		return
	}
	old := r.e.store.Swap(r.store)
	r.e.tlsCfg = r.cfg
	r.e.log.Info("certificates reloaded with new settings")
	if err := old.Close(); err != nil {
		r.e.log.Error("closing the replaced certificate store", "err", err) // the new one serves regardless
	}
}

// abort drops what prepareReload loaded; the running store serves on.
func (r *certReload) abort() error {
	if r == nil || r.store == nil {
		return nil
	}
	return r.store.Close()
}

// rereadCerts reloads the certificate files on SIGHUP. Unlike a config
// reload it goes pair by pair, as a file change does: a pair that does
// not load keeps serving its old certificate (the error is returned and
// logged), the others are swapped in.
func (e *edge) rereadCerts() error {
	if e == nil || e.tls == nil {
		return nil
	}
	return e.store.Load().Reload()
}

// edgeRestartNeeded reports whether listener settings that apply only
// at restart changed.
func edgeRestartNeeded(old, cur *conf.Config) bool {
	return old.TLS.Listen != cur.TLS.Listen || old.TLS.H2MaxStreams != cur.TLS.H2MaxStreams ||
		old.TLS.HTTP3 != cur.TLS.HTTP3 || old.TLS.H3MaxStreams != cur.TLS.H3MaxStreams || old.TLS.H3ZeroRTT != cur.TLS.H3ZeroRTT ||
		old.TLS.H3StreamWindow != cur.TLS.H3StreamWindow || old.TLS.H3ConnWindow != cur.TLS.H3ConnWindow ||
		!reflect.DeepEqual(old.TLS.ProxyProtocol, cur.TLS.ProxyProtocol) || !reflect.DeepEqual(old.H2C, cur.H2C)
}

// openConns counts the TLS and h2c listeners' open connections (0 on a
// nil *edge).
func (e *edge) openConns() (n int64) {
	if e == nil {
		return 0
	}
	for _, s := range []*h2.Server{e.tls, e.h2c} {
		if s != nil {
			n += s.Listener().Stats().Open
		}
	}
	return n
}

// shutdown drains every listener at once (GOAWAY to HTTP/2 and HTTP/3
// clients, in-flight streams finish until ctx ends), then stops the
// store.
func (e *edge) shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	errs := make(chan error, 3)
	n := 0
	for _, s := range []*h2.Server{e.tls, e.h2c} {
		if s != nil {
			n++
			go func() { errs <- s.Shutdown(ctx) }()
		}
	}
	if e.h3 != nil {
		n++
		go func() { errs <- e.h3.Shutdown(ctx) }()
	}
	var all []error
	for range n {
		all = append(all, <-errs)
	}
	if store := e.store.Load(); store != nil {
		all = append(all, store.Close())
	}
	return errors.Join(all...)
}

// httpsPort is the port of the TLS listener for HTTPS redirects; 0 when
// there is none (the redirect then names no port: a TLS terminator in
// front answers on 443).
func httpsPort(c *conf.Config) int {
	_, port, err := net.SplitHostPort(c.TLS.Listen)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(port) // validated by conf
	return n
}
