package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/internal/landlock"
	"github.com/ramjet-proxy/ramjet/proxy"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
	"github.com/ramjet-proxy/ramjet/purge"
)

// daemon is the running process: long-lived state (cache, proxy with its
// in-flight fills, listeners) plus the config it was last given.
type daemon struct {
	path    string
	flags   overrides
	log     *slog.Logger
	level   *slog.LevelVar
	cache   *cache.Cache
	private *cache.Cache // nil when cache.private_size is 0
	proxy   *proxy.Proxy
	hub     *purge.Hub
	fan     *purge.Fanout // nil on a single node
	// handedOver: an upgrade's new process serves; this one only drains.
	handedOver bool
	// shares are the disk tiers of the sites with a cache of their own.
	shares shares
	// tier is the shared cache's disk tier; nil when off.
	tier *disk.Tier
	// journal has the purges applied since an upgrade's checkpoint.
	journal journal
	// followed: this process follows its predecessor's journal, so what
	// it loaded is no gap.
	followed bool
	edge     *edge // TLS and h2c listeners; nil when neither is configured
	// api is the admin purge API, rebuilt by a reload (the sites' tokens).
	api     atomic.Pointer[purge.API]
	cfg     *conf.Config
	lastRaw []byte
	// wafs are the compiled WAF rule sets, kept across reloads that keep
	// a site's rules.
	wafs      *waf.Library
	wafsInUse []*waf.Set // those of the last config built
	// socks are the listening sockets, taken over from the process
	// before or opened, which an upgrade hands on.
	socks *sockets
	// closing has HTTP/1.1 answers say "Connection: close": set once an
	// upgrade's new process took the listeners.
	closing atomic.Bool
}

func serve(args []string, stderr io.Writer) int {
	d := &daemon{level: new(slog.LevelVar), wafs: waf.NewLibrary()}
	if err := d.parseFlags(args, stderr); err != nil {
		return 2
	}
	cfg, raw, err := d.load()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	d.cfg, d.lastRaw = cfg, raw
	d.log = newLogger(cfg.Log, d.level)
	if d.socks, err = inheritSockets(); err != nil {
		d.log.Error("ramjet not started", "err", err)
		return 1
	}
	if err := d.run(); err != nil {
		d.log.Error("ramjet stopped", "err", err)
		return 1
	}
	return 0
}

// parseFlags reads serve's command line into d, touching nothing else;
// a bad one is reported on stderr.
func (d *daemon) parseFlags(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&d.path, "config", "", "config file (YAML); embedded defaults when empty")
	fs.StringVar(&d.flags.listen, "listen", "", "main listener address, overrides listen")
	fs.StringVar(&d.flags.origin, "origin", "", "origin URL, overrides origin.servers")
	fs.StringVar(&d.flags.admin, "admin", "", "admin listener address, overrides admin.listen")
	fs.StringVar(&d.flags.adminToken, "admin-token", "", "admin bearer token, overrides admin.token")
	fs.StringVar(&d.flags.redis, "redis", "", "Redis URL for purge fan-out across nodes, overrides purge.redis")
	fs.StringVar(&d.flags.node, "node", "", "this node's name for the fan-out, overrides purge.node")
	fs.StringVar(&d.flags.docroot, "docroot", "", "serve this directory (static files and PHP) with ramjet's own php-cgi workers instead of an origin")
	fs.StringVar(&d.flags.phpCGI, "php-cgi", "", "php-cgi binary for --docroot (default: php-cgi on PATH)")
	d.flags.tls.register(fs)
	fs.Func("php-workers", "PHP worker processes at most (default 4)", func(s string) error {
		n, err := strconv.Atoi(s)
		d.flags.phpWorkers = &n
		return err
	})
	fs.Func("php-idle-suspend", "SIGSTOP PHP workers idle this long, e.g. 10s; 0 never (default 10s)", func(s string) error {
		v, err := time.ParseDuration(s)
		d.flags.phpIdleSuspend = &v
		return err
	})
	return fs.Parse(args)
}

// load reads the file (or the embedded defaults) and applies the flags.
func (d *daemon) load() (*conf.Config, []byte, error) {
	cfg, raw := conf.Default(), []byte(nil)
	if d.path != "" {
		var err error
		if cfg, raw, err = conf.Load(d.path); err != nil {
			return nil, raw, err
		}
	}
	d.flags.apply(cfg)
	if err := cfg.Validate(); err != nil {
		return nil, raw, fmt.Errorf("invalid settings: %w", err)
	}
	return cfg, raw, nil
}

func (d *daemon) run() error {
	// Caught from the start, handled once serving (loop): a SIGTERM that
	// came before the loop, during the disk tier's load or just after
	// /healthz first answered, took the default action and killed the
	// process, without a drain or the tier's clean stop (the next start
	// then read as a crash).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	setMemoryLimit(d.cfg, d.log)
	var err error
	if d.cache, err = cache.New(cache.Config{Size: int64(d.cfg.Cache.Size)}); err != nil {
		return err
	}
	defer d.cache.Close()
	if d.cfg.Cache.PrivateSize > 0 {
		if d.private, err = cache.New(cache.Config{Size: int64(d.cfg.Cache.PrivateSize)}); err != nil {
			return err
		}
		defer d.private.Close()
	}
	pc, err := d.proxyConfig(d.cfg, d.lastRaw)
	if err != nil {
		return err
	}
	if d.proxy, err = proxy.New(pc, proxy.Stores{Public: d.cache, Private: d.private, NewShare: d.newShare}, d.log); err != nil {
		return err
	}
	defer d.proxy.Close()
	registerWAFMetrics(d.proxy.Metrics().Set(), d.wafs)
	tier, err := d.openDisk()
	if err != nil {
		return err
	}
	d.tier = tier

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer d.endJournal() // last: every purge applied, the tier left
	if tier != nil {
		tier.Start(ctx)
		defer d.closeDisk(tier) // after the fan-out and the servers: every purge applied
		if err := d.openShares(); err != nil {
			return err
		}
	}
	if jf := d.followPredecessor(ctx); jf != nil {
		defer jf.Close()
	}
	resume := d.resumePosition(tier)
	fan, err := d.startFanout(ctx, resume)
	if err != nil {
		return err
	}
	if fan != nil {
		defer fan.Close()
	}
	d.hub = purge.NewHub(journaled{d}, fan, d.proxy.Metrics().Set())
	d.fan = fan
	d.proxy.SetPurger(d.hub)
	api, err := d.newAPI(d.cfg)
	if err != nil {
		return err
	}
	d.api.Store(api)
	if err := d.proxy.Start(ctx); err != nil {
		return err
	}
	if tier != nil {
		d.gapAfterLoad(tier, resume != nil)
	}
	sc := serverConfig(d.cfg)
	sc.ProxyProtocol = d.proxyProtocol(d.cfg.Server.ProxyProtocol, "main")
	sc.Metrics = d.proxy.Metrics().Set()
	sc.ErrorHandler = d.proxy.ErrorHandler
	if len(d.cfg.ListenAlso) > 0 {
		sc.Listener, err = d.socks.listenTCPList(ctx, append([]string{sc.Addr}, d.cfg.ListenAlso...), sc.IdleTimeout)
	} else {
		sc.Listener, err = d.socks.listenTCP(ctx, sc.Addr, sc.IdleTimeout)
	}
	if err != nil {
		return fmt.Errorf("main listener: %w", err)
	}
	h := d.closeWhenHandedOver(d.proxy.ServeFastHTTP)
	sc.Inline = d.closeWhenHandedOverHit(d.proxy.ServeHit)
	main := proxy.NewServer(sc, h, d.log)
	if err := main.Start(ctx); err != nil {
		return err
	}
	if d.edge, err = startEdge(ctx, d.cfg, d.proxy, h, d.socks, d.proxyProtocol, d.log); err != nil {
		return errors.Join(err, main.Shutdown(ctx))
	}
	admin, err := d.startAdmin(ctx)
	if err != nil {
		return errors.Join(err, main.Shutdown(ctx), d.edge.shutdown(ctx))
	}
	changed := make(chan struct{}, 1)
	w, err := d.watch(ctx, changed)
	if err != nil {
		d.log.Warn("config file not watched; reload with SIGHUP", "err", err)
	}
	if err := d.socks.closeInherited(); err != nil {
		d.log.Warn("closing the inherited sockets no listener took", "err", err)
	}
	if err := d.socks.serving(); err != nil {
		d.log.Warn("telling that ramjet serves", "err", err) // the old process times out and serves on
	}
	d.log.Info("ramjet started", "version", version, "origin", d.cfg.Origin.Servers, "pid", os.Getpid())
	if d.loop(changed, sigs) {
		d.handedOver = true
		d.handOver(main, admin)
	} else if d.socks.shared() {
		d.handOver(main, admin) // the web server beside us takes the new connections
	}
	return d.shutdown(main, admin, w)
}

// loop handles signals (caught since run began) until SIGTERM or SIGINT,
// or until an upgrade's new process serves (it then reports true): HUP
// and file changes reload, USR1 reopens the access logs (logrotate's
// postrotate), USR2 upgrades (the binary now on disk takes over the
// listeners).
func (d *daemon) loop(changed <-chan struct{}, sigs <-chan os.Signal) (handedOver bool) {
	for {
		select {
		case <-changed:
			d.reload("file changed")
		case s := <-sigs:
			if s == syscall.SIGUSR1 {
				_ = d.reopenLogs("SIGUSR1") // logged there: a signal has no one to answer
				continue
			}
			if s == syscall.SIGUSR2 {
				if d.upgradeBySignal() {
					return true
				}
				continue
			}
			if s == syscall.SIGHUP {
				d.reload("SIGHUP")
				if err := d.edge.rereadCerts(); err != nil {
					d.log.Error("certificate reload", "trigger", "SIGHUP", "err", err)
				}
				continue
			}
			d.log.Info("draining", "signal", s.String(), "timeout", time.Duration(d.cfg.Server.DrainTimeout))
			return false
		}
	}
}

func (d *daemon) shutdown(main, admin *proxy.Server, w *conf.Watcher) error {
	drain := time.Duration(d.cfg.Server.DrainTimeout)
	if drain <= 0 {
		drain = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	edgeDone := make(chan error, 1)
	go func() { edgeDone <- d.edge.shutdown(ctx) }() // drains beside main
	errs := []error{main.Shutdown(ctx), <-edgeDone}
	if admin != nil {
		errs = append(errs, admin.Shutdown(ctx))
	}
	if w != nil {
		errs = append(errs, w.Close())
	}
	d.log.Info("ramjet stopped")
	return errors.Join(errs...)
}

func (d *daemon) startAdmin(ctx context.Context) (*proxy.Server, error) {
	if d.cfg.Admin.Listen == "" {
		return nil, nil
	}
	sc := proxy.ServerConfig{Name: "admin", Addr: d.cfg.Admin.Listen,
		ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute,
		ProxyProtocol: d.proxyProtocol(d.cfg.Admin.ProxyProtocol, "admin")}
	var err error
	if sc.Listener, err = d.socks.listenTCP(ctx, sc.Addr, sc.IdleTimeout); err != nil {
		return nil, fmt.Errorf("admin listener: %w", err)
	}
	s := proxy.NewServer(sc, d.closeWhenHandedOver(d.adminHandler()), d.log)
	return s, s.Start(ctx)
}

// startFanout connects the purge fan-out when Redis is configured; a
// single node needs none.
func (d *daemon) startFanout(ctx context.Context, resume *purge.Position) (*purge.Fanout, error) {
	if d.cfg.Purge.Redis == "" {
		return nil, nil
	}
	redis.SetLogger(purge.RedisLogger{Log: d.log}) // go-redis logs through one process-wide logger
	fan, err := purge.NewFanout(purge.FanoutConfig{
		URL:      d.cfg.Purge.Redis,
		Node:     nodeName(d.cfg),
		Stream:   d.cfg.Purge.Stream,
		Gap:      d.gapPolicy(),
		GapGrace: time.Duration(d.cfg.Purge.GapGrace),
		Resume:   resume,
	}, journaled{d}, d.log, d.proxy.Metrics().Set())
	if err != nil {
		return nil, err
	}
	keys, err := d.cfg.Purge.FanoutKeys()
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	if len(keys) == 0 {
		d.log.Warn("purge.redis_keys not set: fan-out entries are not signed, and whoever can write to Redis can purge, or flush, every node")
	}
	fan.SetKeys(keys)
	if err := fan.Start(ctx); err != nil {
		return nil, err
	}
	d.log.Info("purge fan-out on", "node", nodeName(d.cfg), "stream", d.cfg.Purge.Stream)
	return fan, nil
}

func (d *daemon) watch(ctx context.Context, changed chan<- struct{}) (*conf.Watcher, error) {
	if d.path == "" {
		return nil, nil
	}
	w := &conf.Watcher{Path: d.path, Logger: d.log, OnChange: func() {
		select {
		case changed <- struct{}{}:
		default: // a reload is already pending; it will read the newest file
		}
	}}
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// reopenLogs opens the access log files again at their paths, after
// logrotate moved them; a file that fails keeps the old one and is
// logged.
func (d *daemon) reopenLogs(why string) error {
	if err := d.proxy.ReopenLogs(); err != nil {
		d.log.Error("reopening the access logs", "trigger", why, "err", err)
		return err
	}
	d.log.Info("access logs reopened", "trigger", why)
	return nil
}

// reload builds a new generation from the file and swaps it in; a file
// that does not load keeps the current one serving.
func (d *daemon) reload(why string) {
	if d.path == "" {
		d.log.Info("reload requested but no config file is in use", "trigger", why)
		return
	}
	cfg, raw, err := d.load()
	if raw != nil && bytes.Equal(raw, d.lastRaw) {
		return
	}
	if err == nil {
		err = d.apply(cfg, raw)
	}
	d.proxy.Metrics().Reloaded(err)
	if err != nil {
		d.log.Error("reload failed; keeping the running config", "trigger", why, "err", err)
		d.lastRaw = raw // complain once per bad version of the file
		return
	}
	d.lastRaw = raw
	d.log.Info("config reloaded", "trigger", why)
}

// apply makes cfg the running config. What can fail is built first:
// the certificates and the cache bound are loaded and checked, then
// proxy.Reload builds the proxy generation and swaps it in (or fails,
// changing nothing). Only then are the certificates swapped and the
// rest applied, so a failure anywhere leaves everything as it was.
func (d *daemon) apply(cfg *conf.Config, raw []byte) error {
	tlsNext, err := d.edge.prepareReload(cfg)
	if err != nil {
		return err
	}
	if err := checkCacheSize(cfg); err != nil {
		return errors.Join(err, tlsNext.abort())
	}
	api, err := d.newAPI(cfg) // the site tokens: read (token files) before anything is swapped
	if err != nil {
		return errors.Join(err, tlsNext.abort())
	}
	pc, err := d.proxyConfig(cfg, raw) // the WAF rule sets compile, or nothing changes
	if err != nil {
		return errors.Join(err, tlsNext.abort())
	}
	keys, err := cfg.Purge.FanoutKeys() // a keys file read now, or nothing changes
	if err != nil {
		return errors.Join(fmt.Errorf("purge: %w", err), tlsNext.abort())
	}
	pc.AltSvc = d.edge.altSvc() // what runs: tls.http3 applies at restart
	if err := d.proxy.Reload(context.Background(), pc); err != nil {
		return errors.Join(err, tlsNext.abort())
	}
	tlsNext.commit()
	d.wafs.Keep(d.wafsInUse)
	d.api.Store(api)
	if d.fan != nil {
		d.fan.SetKeys(keys) // a rotation step: no restart, no lost purge
	}
	_ = d.cache.Resize(int64(cfg.Cache.Size)) // cannot fail: checkCacheSize passed
	if d.private != nil && cfg.Cache.PrivateSize > 0 {
		_ = d.private.Resize(int64(cfg.Cache.PrivateSize)) // conf's Validate asks for at least 1 MiB
	}
	d.level.Set(cfg.Log.SlogLevel())
	if cfg.Listen != d.cfg.Listen || !slices.Equal(cfg.ListenAlso, d.cfg.ListenAlso) || !reflect.DeepEqual(cfg.Admin, d.cfg.Admin) || !reflect.DeepEqual(cfg.Server, d.cfg.Server) ||
		cfg.Log.Format != d.cfg.Log.Format || edgeRestartNeeded(d.cfg, cfg) || (cfg.Cache.PrivateSize == 0) != (d.cfg.Cache.PrivateSize == 0) {
		d.log.Warn("listen, admin, server, log.format, tls.listen, tls.h2_max_streams, tls.http3, tls.h3_*, h2c settings and turning the private cache on or off apply at the next restart or upgrade (SIGUSR2)")
	}
	if cfg.Cache.Disk != d.cfg.Cache.Disk {
		d.log.Warn("cache.disk settings apply at the next restart")
	}
	setMemoryLimit(cfg, d.log)
	d.cfg = cfg
	return nil
}

// proxyConfig is the proxy's config for cfg, the sites' WAF rule sets
// compiled (or kept from the library); a rule file that does not compile
// is a FILE:LINE problem of the file raw came from. The library is left
// holding the sets cfg uses, and those it held before: the caller's
// commit (wafsInUse) drops what no generation needs.
func (d *daemon) proxyConfig(cfg *conf.Config, raw []byte) (proxy.Config, error) {
	pc := proxyConfig(cfg)
	d.warnUnconfined(pc)
	var err error
	if pc.PurgeTokens, err = d.purgeTokens(cfg); err != nil {
		return pc, err
	}
	start := time.Now()
	sets, err := attachWAF(&pc, cfg, d.wafs)
	if err != nil {
		return pc, located(err, raw, d.path)
	}
	if len(sets) > 0 {
		d.log.Info("waf rule sets ready", "sets", len(sets), "took", time.Since(start).Round(time.Millisecond))
	}
	d.wafsInUse = sets
	return pc, nil
}

// warnUnconfined says when docroot sites' PHP runs unconfined for want of
// Landlock (confine: auto): only ramjet's own check stands between a
// swapped symlink and a script outside the root.
func (d *daemon) warnUnconfined(pc proxy.Config) {
	if landlock.ABI() > 0 {
		return
	}
	for _, s := range append([]proxy.Site{pc.Default}, pc.Sites...) {
		if dr := s.Docroot; dr != nil && dr.PHP != nil && dr.PHP.Confine == nil && !dr.FollowSymlinks {
			d.log.Warn("PHP is not confined to the docroot: this kernel has no Landlock (docroot.php.confine)", "root", dr.Root)
		}
	}
}

// checkCacheSize refuses, before anything is swapped, a size that
// cache.Resize would refuse after the proxy generation was swapped in.
// conf's Validate already asks for at least 1 MiB; this keeps apply
// safe should that rule ever loosen.
func checkCacheSize(cfg *conf.Config) error {
	if cfg.Cache.Size <= 0 {
		return fmt.Errorf("cache.size %d: %w", cfg.Cache.Size, cache.ErrBadSize)
	}
	return nil
}

// setMemoryLimit keeps the Go heap, and so RSS, close to the configured
// cache size: evicted entries are garbage, and without a limit the GC
// lets the heap reach twice the live size before collecting.
func setMemoryLimit(c *conf.Config, log *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	size := c.Cache.Size + c.Cache.PrivateSize
	for _, h := range c.Hosts {
		size += h.CacheSize
	}
	limit := cache.MemoryLimit(int64(size))
	debug.SetMemoryLimit(limit)
	log.Debug("memory limit set", "bytes", limit)
}
