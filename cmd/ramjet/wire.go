package main

import (
	"cmp"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/internal/landlock"
	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy"
	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
	"github.com/ramjet-proxy/ramjet/proxy/realip"
	"github.com/ramjet-proxy/ramjet/proxy/sitestats"
)

// overrides are the command-line flags that win over the file.
type overrides struct {
	listen, origin, admin, adminToken, redis, node string
	docroot, phpCGI                                string
	phpWorkers                                     *int
	phpIdleSuspend                                 *time.Duration
	tls                                            tlsFlags
}

func (o overrides) apply(c *conf.Config) {
	if o.listen != "" {
		c.Listen, c.ListenAlso = o.listen, nil // --listen replaces a listen list too
	}
	if o.origin != "" {
		c.Origin.Servers = []string{o.origin}
	}
	if o.admin != "" {
		c.Admin.Listen = o.admin
	}
	if o.adminToken != "" {
		c.Admin.Token = o.adminToken
	}
	if o.redis != "" {
		c.Purge.Redis = o.redis
	}
	if o.node != "" {
		c.Purge.Node = o.node
	}
	o.applyDocroot(&c.Defaults.Docroot)
	o.tls.apply(c)
}

// applyDocroot sets the docroot flags on the defaults (hosts in a file
// keep their own settings).
func (o overrides) applyDocroot(d *conf.Docroot) {
	if o.docroot != "" {
		d.Root, d.Serve = o.docroot, "all"
	}
	if o.phpCGI != "" {
		d.PHP.Binary = o.phpCGI
	}
	if o.phpWorkers != nil {
		d.PHP.Workers = *o.phpWorkers
		d.PHP.MinWorkers = min(d.PHP.MinWorkers, *o.phpWorkers)
	}
	if o.phpIdleSuspend != nil {
		d.PHP.IdleSuspend = conf.Duration(*o.phpIdleSuspend)
	}
}

// proxyConfig translates the file's settings into the proxy's own Config.
func proxyConfig(c *conf.Config) proxy.Config {
	pc := proxy.Config{
		Origin: origin.Config{
			Servers:        c.Origin.Servers,
			ConnectTimeout: timeout(c.Origin.ConnectTimeout),
			HeaderTimeout:  timeout(c.Origin.HeaderTimeout),
			BodyTimeout:    timeout(c.Origin.BodyTimeout),
			IdleTimeout:    time.Duration(c.Origin.IdleTimeout), // positive: validated
			MaxConns:       c.Origin.MaxConns,
			MaxQueue:       cmp.Or(c.Origin.MaxQueue, -1), // the file's 0 is "no queue"
			Health: origin.HealthConfig{
				Path:     c.Origin.Health.Path,
				Interval: time.Duration(c.Origin.Health.Interval),
				Timeout:  time.Duration(c.Origin.Health.Timeout),
				Fall:     c.Origin.Health.Fall,
				Rise:     c.Origin.Health.Rise,
			},
		},
		Default:    site(nil, c.Defaults, c.AccessLog),
		PurgeAllow: prefixes(c.Purge.Trusted),
		RealIP:     realip.Config{From: prefixes(c.RealIP.From), Header: c.RealIP.Header},
		ESI: proxy.ESIConfig{
			MaxDepth:    c.ESI.MaxDepth,
			MaxIncludes: c.ESI.MaxIncludes,
			Timeout:     time.Duration(c.ESI.Timeout),
			AllowHosts:  c.ESI.AllowHosts,
		},
		MaxObjectSize:  int64(c.Cache.MaxObjectSize),
		MaxRequestBody: int64(c.Server.MaxRequestBody),
		Stats:          sitestats.Config{TopURLs: c.Stats.TopURLs},
		HTTPSPort:      httpsPort(c),
		AltSvc:         altSvc(c),
		HitForPass:     time.Duration(c.Cache.HitForPass),
		Targeted:       c.Cache.TargetedCacheControl,
		DrainTimeout:   time.Duration(c.Server.DrainTimeout),
		Compress: proxy.Compress{
			Gzip:    c.Cache.Compress.Gzip,
			Brotli:  c.Cache.Compress.Brotli,
			MinSize: int(c.Cache.Compress.MinSize),
			Types:   c.Cache.Compress.Types,
		},
	}
	for _, h := range c.Hosts {
		s := site(h.Names, h.Site, h.AccessLog)
		s.CacheSize = int64(h.CacheSize)
		pc.Sites = append(pc.Sites, s)
	}
	return pc
}

// prefixes converts validated CIDR strings (conf.Validate checked them).
func prefixes(list []string) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		if p, err := conf.ParsePrefix(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// timeout maps the file's "0 = none" to origin's "negative = none".
func timeout(d conf.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return time.Duration(d)
}

func site(names []string, s conf.Site, log conf.AccessLog) proxy.Site {
	return proxy.Site{
		AccessLog:       accessLog(log),
		Names:           names,
		Cache:           s.Cache,
		ESI:             s.ESI,
		DefaultTTL:      time.Duration(s.DefaultTTL),
		Heuristic:       s.Heuristic,
		Grace:           time.Duration(s.Grace),
		CacheSetCookie:  s.CacheSetCookie,
		DebugHeaders:    s.DebugHeaders,
		BypassCookies:   s.BypassCookies,
		VaryCookies:     s.VaryCookies,
		DropQueryParams: s.DropQueryParams,
		LSCacheHeader:   s.LSCacheHeader,
		Docroot:         docrootConfig(s.Docroot, serverVars(s)),
		HTTPSRedirect:   s.HTTPSRedirect,
		HSTS:            s.HSTS,
		AltSvc:          s.AltSvc,
		HtaccessRoot:    s.HtaccessRoot,
		// Apart: a name this long would realign every line above.
		DefaultTTLWithCookies: s.DefaultTTLWithCookies,
		AnonymousCookies:      s.AnonymousCookies,
		Crawler: &proxy.Crawler{MaxMisses: s.Crawler.MaxMisses, MaxBusy: s.Crawler.MaxBusy,
			RetryAfter: time.Duration(s.Crawler.RetryAfter)},
		Warm: warm(s.Warm),
	}
}

// warm is a validated warm block; nil when off.
func warm(w conf.Warm) *proxy.Warm {
	if !w.Enabled {
		return nil
	}
	return &proxy.Warm{Concurrency: w.Concurrency, Rate: float64(w.Rate), MaxEntries: w.MaxEntries, MaxBusy: w.MaxBusy}
}

// serverVars are the CGI variables a docroot site's scripts get from its
// config, as LiteSpeed sets them: X-LSCACHE says the cache is there
// (with "crawler" when the site lets its plugin crawl), and the CRAWLER_*
// variables bound how the plugin's crawler runs.
func serverVars(s conf.Site) []phppool.Param {
	if !s.LSCacheHeader {
		return nil // the site keeps the plugin off: nothing may turn it on
	}
	c := s.Crawler
	lscache := "on"
	if c.MaxMisses > 0 {
		lscache = "on,crawler"
	}
	vars := []phppool.Param{{Name: "X-LSCACHE", Value: lscache}}
	for _, v := range [...]struct {
		name string
		n    int
	}{{"CRAWLER_USLEEP", c.USleep}, {"CRAWLER_LOAD_LIMIT", c.LoadLimit}, {"CRAWLER_LOAD_LIMIT_ENFORCE", c.LoadLimitEnforce}} {
		if v.n > 0 {
			vars = append(vars, phppool.Param{Name: v.name, Value: strconv.Itoa(v.n)})
		}
	}
	return vars
}

// accessLog translates a validated access_log block; the zero value (no
// log) when it writes nothing.
func accessLog(a conf.AccessLog) proxy.AccessLog {
	if !a.On() {
		return proxy.AccessLog{}
	}
	f, err := accesslog.ParseFormat(cmp.Or(a.Format, "combined"))
	if err != nil {
		return proxy.AccessLog{} // cannot happen: conf.Validate allows only these formats
	}
	path := a.Path
	if path == conf.AccessLogStdout {
		path = accesslog.Stdout
	}
	return proxy.AccessLog{Path: path, Format: f}
}

// docrootConfig translates a site's docroot block; nil when it has none.
func docrootConfig(d conf.Docroot, vars []phppool.Param) *proxy.Docroot {
	if d.Root == "" {
		return nil
	}
	h := d.PHP
	return &proxy.Docroot{
		Config: docroot.Config{
			Root:            d.Root,
			PHPOnly:         d.Serve == "php",
			Index:           d.Index,
			FrontController: d.FrontController,
			PathInfo:        d.PathInfo,
			FollowSymlinks:  d.FollowSymlinks,
			StaticTTL:       time.Duration(d.StaticTTL),
			Htaccess:        bool(d.Htaccess),
			ServerVars:      vars,
		},
		PHP: &phppool.Config{
			Engine:         phppool.Engine(h.Engine),
			Binary:         h.Binary,
			Min:            h.MinWorkers,
			Max:            h.Workers,
			MaxRequests:    h.MaxRequests,
			MaxRSS:         int64(h.MaxRSS),
			IdleSuspend:    time.Duration(h.IdleSuspend),
			IdleExit:       time.Duration(h.IdleExit),
			QueueWait:      time.Duration(h.QueueWait),
			RequestTimeout: time.Duration(h.RequestTimeout),
			SlowRequest:    time.Duration(h.SlowRequest),
			User:           h.User,
			Group:          h.Group,
			Env:            h.Env,
			INIFile:        h.INIFile,
			INI:            h.INI,
			Confine:        phpConfine(d),
		},
	}
}

// phpConfine is how a docroot site's PHP is confined (internal/landlock):
// to its root and read_paths, launched through ramjet's own binary.
// "auto" confines where the kernel can, unless the site lets symlinks
// lead anywhere (follow_symlinks).
func phpConfine(d conf.Docroot) *phppool.Confine {
	switch d.PHP.Confine {
	case "off":
		return nil
	case "auto":
		if d.FollowSymlinks || landlock.ABI() < 1 {
			return nil
		}
	}
	exe, _ := os.Executable() // "" if unknown: the pool then fails with the reason
	return &phppool.Confine{Launcher: exe, Paths: append([]string{d.Root}, d.PHP.ReadPaths...)}
}

func serverConfig(c *conf.Config) proxy.ServerConfig {
	return proxy.ServerConfig{
		Name:           "main",
		Addr:           c.Listen,
		HeaderTimeout:  time.Duration(c.Server.HeaderTimeout),
		ReadTimeout:    time.Duration(c.Server.ReadTimeout),
		WriteTimeout:   time.Duration(c.Server.WriteTimeout),
		IdleTimeout:    time.Duration(c.Server.IdleTimeout),
		MaxHeaderBytes: int(c.Server.MaxHeaderBytes),
		MaxConns:       c.Server.MaxConns,
		MaxConnsPerIP:  c.Server.MaxConnsPerIP,
		NoParking:      !c.Server.ParkIdle,
	}
}

// proxyProtocol is a listener's PROXY protocol settings, nil when off.
// Refused connections are counted per listener and logged at debug
// level: a flood of them must not flood the log.
func (d *daemon) proxyProtocol(pp conf.ProxyProtocol, listener string) *proxyproto.Config {
	if !pp.Enabled {
		return nil
	}
	refused := d.proxy.Metrics().Set().GetOrCreateCounter(`ramjet_proxy_protocol_refused_total{listener="` + listener + `"}`)
	return &proxyproto.Config{
		Allow:   prefixes(pp.Allow),
		Timeout: time.Duration(pp.Timeout),
		Refused: func(peer net.Addr, err error) {
			refused.Inc()
			d.log.Debug("connection refused", "listener", listener, "peer", peer.String(), "err", err)
		},
	}
}

func newLogger(c conf.Log, level *slog.LevelVar) *slog.Logger {
	level.Set(c.SlogLevel())
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// nodeName is the configured node name, or hostname:port of the main
// listener, which is unique per process on one host and across hosts.
func nodeName(c *conf.Config) string {
	if c.Purge.Node != "" {
		return c.Purge.Node
	}
	host, err := os.Hostname()
	if err != nil {
		host = "ramjet"
	}
	_, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return host
	}
	return net.JoinHostPort(host, port)
}
