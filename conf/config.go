package conf

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
)

// Config is one parsed configuration file. The yaml tags are the keys of
// the file; ramjet.example.yaml documents each of them. A Config from
// Parse or Default is never shared: the caller may keep or change it.
type Config struct {
	Listen string `yaml:"listen"` // main HTTP listener, host:port
	Admin  Admin  `yaml:"admin"`
	Log    Log    `yaml:"log"`
	// AccessLog logs the client requests of every site, but for hosts
	// that name their own.
	AccessLog AccessLog `yaml:"access_log"`
	Server    Server    `yaml:"server"`
	Origin    Origin    `yaml:"origin"`
	Cache     Cache     `yaml:"cache"`
	Purge     Purge     `yaml:"purge"`
	ESI       ESI       `yaml:"esi"`
	Stats     Stats     `yaml:"stats"`
	TLS       TLS       `yaml:"tls"`
	H2C       H2C       `yaml:"h2c"`
	RealIP    RealIP    `yaml:"real_ip"`
	Defaults  Site      `yaml:"defaults"` // for requests whose Host matches no Hosts entry
	// Hosts hold effective settings: each is Defaults overlaid with its
	// block in the file, so callers never merge.
	Hosts []Host `yaml:"hosts"`

	// ListenAlso are the main listener's further addresses, when listen
	// is a list (its first is Listen): nginx's `listen 80; listen
	// [::]:80;`. An IPv6 address of a list is IPv6 only.
	ListenAlso []string `yaml:"-"`
}

// Stats bounds what each site keeps for its owner's GET /stats.
type Stats struct {
	// TopURLs is how many URLs answered uncached each site lists, with
	// the reason; 0 lists none.
	TopURLs int `yaml:"top_urls"`
}

// ESI bounds Edge Side Includes assembly.
type ESI struct {
	MaxDepth    int      `yaml:"max_depth"`    // nested includes
	MaxIncludes int      `yaml:"max_includes"` // include points per page
	Timeout     Duration `yaml:"timeout"`      // per fragment
	// AllowHosts may be included besides the page's own host.
	AllowHosts []string `yaml:"allow_hosts"`
}

// Purge configures who may purge and the fan-out of purges across nodes.
type Purge struct {
	// Trusted are the networks (CIDR or address) that may send PURGE and
	// REFRESH requests on the main listener; others get 405.
	Trusted []string `yaml:"trusted"`
	// AdminAllow are the networks that may call the admin purge API.
	AdminAllow []string `yaml:"admin_allow"`
	// Redis is "redis://host:port/db" (or rediss://, unix://): every purge
	// is published there and applied on every node. "" = a single node.
	Redis string `yaml:"redis"`
	// Node names this node in the stream; "" = hostname and listen port.
	Node string `yaml:"node"`
	// Stream is the Redis stream key.
	Stream string `yaml:"stream"`
	// Gap is what a node does when it may have missed purges it cannot
	// name (Redis restarted without its data, the stream trimmed past
	// it): "stale" serves what it holds stale while one request refreshes
	// each page, for at most GapGrace; "flush" empties the cache.
	Gap string `yaml:"gap"`
	// GapGrace bounds how long a page is served stale after a gap.
	GapGrace Duration `yaml:"gap_grace"`
	// RedisKeys sign this node's fan-out entries (the first) and verify
	// the others' (any); RedisKeysFile holds them one per line instead.
	// None: entries are neither signed nor checked (fanoutkeys.go).
	RedisKeys     []string `yaml:"redis_keys"`
	RedisKeysFile string   `yaml:"redis_keys_file"`
}

// Admin is the admin listener (metrics, healthz).
type Admin struct {
	Listen string `yaml:"listen"` // host:port; "" disables the admin listener
	Token  string `yaml:"token"`  // bearer token; required unless Listen is loopback
	// Names the admin listener answers to in Host, besides "localhost"
	// and any address: the rest get 421 (DNS rebinding).
	Names []string `yaml:"names"`
	// ProxyProtocol: the admin listener behind a balancer (it normally
	// is not: it is loopback).
	ProxyProtocol ProxyProtocol `yaml:"proxy_protocol"`
}

// Log selects the process logger.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn or error
	Format string `yaml:"format"` // text or json
}

// Server bounds the client-facing HTTP server. A zero timeout means none.
type Server struct {
	// HeaderTimeout bounds a request's header: from the accept for a
	// connection's first request, from its first byte for later ones
	// (slowloris). On the TLS listener it bounds the handshake, then the
	// header or the HTTP/2 preface. 0: read_timeout bounds the whole
	// request (and the handshake) instead. MaxConns and MaxConnsPerIP
	// apply to each client listener (main, TLS, h2c) on its own.
	HeaderTimeout  Duration `yaml:"header_timeout"`
	ReadTimeout    Duration `yaml:"read_timeout"`     // the body, after the header (the whole request without header_timeout)
	WriteTimeout   Duration `yaml:"write_timeout"`    // whole response
	IdleTimeout    Duration `yaml:"idle_timeout"`     // keep-alive idle
	MaxRequestBody Size     `yaml:"max_request_body"` // larger bodies get 413
	MaxHeaderBytes Size     `yaml:"max_header_bytes"` // larger headers get 431
	MaxConns       int      `yaml:"max_conns"`        // open client connections, idle ones included
	MaxConnsPerIP  int      `yaml:"max_conns_per_ip"` // of one client address; 0: no bound
	// ParkIdle parks idle keep-alive HTTP/1.1 connections of the main
	// and h2c listeners: no goroutine, no buffers (proxy/conns).
	ParkIdle     bool     `yaml:"park_idle"`
	DrainTimeout Duration `yaml:"drain_timeout"` // grace for in-flight requests on SIGTERM
	// ProxyProtocol is the main listener's (tls and h2c have their own).
	ProxyProtocol ProxyProtocol `yaml:"proxy_protocol"`
}

// Origin is the pool of backend servers. A zero timeout means none.
type Origin struct {
	// Servers are "http://host:port" URLs: explicit port, no path,
	// query, fragment or user info.
	Servers        []string `yaml:"servers"`
	ConnectTimeout Duration `yaml:"connect_timeout"`
	HeaderTimeout  Duration `yaml:"header_timeout"` // until response headers
	BodyTimeout    Duration `yaml:"body_timeout"`   // idle time between body reads
	// IdleTimeout closes a keep-alive connection unused this long; it is
	// never "none" and must stay under the origin's own keep-alive
	// timeout (Apache and node: 5s), so that the origin does not close a
	// connection just as ramjet reuses it.
	IdleTimeout Duration `yaml:"idle_timeout"`
	MaxConns    int      `yaml:"max_conns"` // per server
	// MaxQueue bounds the requests waiting for a connection when every
	// one is busy (each waits connect_timeout at most); past it they get
	// 503 with Retry-After at once. 0: none wait.
	MaxQueue int    `yaml:"max_queue"`
	Health   Health `yaml:"health"`
}

// Health configures origin health checks.
type Health struct {
	Path     string   `yaml:"path"` // "" = passive checks only; else starts with "/"
	Interval Duration `yaml:"interval"`
	Timeout  Duration `yaml:"timeout"`
	Fall     int      `yaml:"fall"` // consecutive failures to mark a server down
	Rise     int      `yaml:"rise"` // consecutive successes to mark it up again
}

// Cache bounds the in-memory page cache.
type Cache struct {
	Size          Size     `yaml:"size"`            // stored bytes, at least 1MiB
	MaxObjectSize Size     `yaml:"max_object_size"` // at most Size
	HitForPass    Duration `yaml:"hit_for_pass"`    // how long an uncacheable URL skips coalescing
	// TargetedCacheControl names a response field that addresses ramjet
	// alone (RFC 9213): it governs ramjet's caching before
	// CDN-Cache-Control and Cache-Control, and is not sent to clients.
	// "" names none (CDN-Cache-Control still counts).
	TargetedCacheControl string   `yaml:"targeted_cache_control"`
	PrivateSize          Size     `yaml:"private_size"` // memory bound of the per-user private cache; 0 disables it
	Compress             Compress `yaml:"compress"`
	Disk                 Disk     `yaml:"disk"`
}

// Compress selects response compression.
type Compress struct {
	Gzip    bool `yaml:"gzip"`
	Brotli  bool `yaml:"brotli"`
	MinSize Size `yaml:"min_size"` // smaller bodies are sent as they are
	// Types are media types "type/subtype", lower case, without
	// parameters or wildcards; compare the response's media type to them.
	Types []string `yaml:"types"`
}

// Site holds per-host caching policy. Cookie and query parameter patterns
// are exact names, or prefixes when they end in "*" ("utm_*"; "*" alone
// matches everything).
type Site struct {
	Cache      bool     `yaml:"cache"`
	ESI        bool     `yaml:"esi"`         // process ESI in responses that ask for it
	DefaultTTL Duration `yaml:"default_ttl"` // TTL without freshness headers; 0 = not cached
	// DefaultTTLWithCookies lists the request paths (exact, or prefixes
	// ending in "*") where DefaultTTL and heuristic freshness also store
	// the answer to a request carrying cookies other than analytics ones
	// (or the vary cookies): elsewhere such an answer may be someone's
	// own page and is not stored without freshness of its own.
	DefaultTTLWithCookies []string `yaml:"default_ttl_with_cookies"`
	// Heuristic gives a response without explicit freshness but with a
	// Last-Modified 10 % of its age as lifetime (RFC 9111 4.2.2), at most
	// a day, before DefaultTTL applies. Off by default.
	Heuristic       bool     `yaml:"heuristic_freshness"`
	Grace           Duration `yaml:"grace"`            // opt-in, not RFC 9111: serve stale this long while refreshing or on origin errors when the response allows no staleness of its own
	CacheSetCookie  bool     `yaml:"cache_set_cookie"` // false: responses with Set-Cookie are never stored
	DebugHeaders    bool     `yaml:"debug_headers"`    // keep internal X-LiteSpeed-* and tag headers
	BypassCookies   []string `yaml:"bypass_cookies"`   // any of these cookies bypasses the cache
	VaryCookies     []string `yaml:"vary_cookies"`     // values of these cookies join the cache key
	DropQueryParams []string `yaml:"drop_query_params"`

	// AnonymousCookies name cookies that identify nobody (the site's own
	// analytics or consent cookies), beyond the built-in list: left out
	// of the private identity, and no bar to DefaultTTL.
	AnonymousCookies []string `yaml:"anonymous_cookies"`

	// LSCacheHeader speaks the LSCache protocol with the site: "X-LSCACHE:
	// on" upstream, which makes the LiteSpeed Cache WordPress plugin emit
	// its cache headers, and X-LiteSpeed-Cache (hit, hit,private or miss)
	// on the answers ramjet caches, which its crawler reads.
	LSCacheHeader bool    `yaml:"lscache_header"`
	Docroot       Docroot `yaml:"docroot"`
	// HTTPSRedirect answers plain-HTTP requests with a redirect to the
	// same URL over HTTPS.
	HTTPSRedirect bool `yaml:"https_redirect"`
	// HSTS is the Strict-Transport-Security value added to responses
	// sent over TLS ("max-age=31536000; includeSubDomains"); "" = none.
	HSTS string `yaml:"hsts"`
	// AltSvc advertises HTTP/3 (Alt-Svc: h3=":port") on responses sent
	// over the TLS listener when tls.http3 is on; off for a host whose
	// clients must stay on TCP.
	AltSvc bool `yaml:"alt_svc"`
	// WAF inspects the requests that may reach the application.
	WAF WAF `yaml:"waf"`
	// HtaccessRoot (proxy mode) is the origin's document root: ramjet
	// reads the LiteSpeed cache rules of its .htaccess files (mobile
	// variant, no-cache cookies and agents, vary cookies, dropped query
	// parameters); the origin's server applies the rest. "" = none.
	HtaccessRoot string `yaml:"htaccess_root"`
	// Crawler bounds the LiteSpeed Cache plugin's crawler (crawler.go).
	Crawler Crawler `yaml:"crawler"`
	// Warm fetches the most requested pages a purge dropped again
	// (warm.go).
	Warm Warm `yaml:"warm"`
}

// Switch is a setting written on or off (true/false also read).
type Switch bool

// Docroot serves a site from a directory with ramjet's own php-cgi
// workers instead of (or beside) the origin.
type Docroot struct {
	// Root is the directory; "" = the origin answers everything.
	Root string `yaml:"root"`
	// Serve is "all" (static files and PHP from Root, no origin) or "php"
	// (only .php from Root; everything else from the origin).
	Serve string `yaml:"serve"`
	// Index names tried for a request ending in "/".
	Index []string `yaml:"index"`
	// FrontController answers paths matching no file, like nginx's
	// try_files $uri $uri/ /index.php?$args; "" answers them 404.
	FrontController string `yaml:"front_controller"`
	// PathInfo splits /script.php/extra into the script and PATH_INFO.
	PathInfo bool `yaml:"path_info"`
	// Htaccess reads the .htaccess files from Root down to each
	// requested directory, as Apache with AllowOverride All does.
	Htaccess Switch `yaml:"htaccess"`
	// FollowSymlinks lets symlinks lead outside Root.
	FollowSymlinks bool `yaml:"follow_symlinks"`
	// StaticTTL is how long the cache keeps static files; 0 = not cached.
	StaticTTL Duration `yaml:"static_ttl"`
	PHP       PHP      `yaml:"php"`
}

// PHP is a site's php-cgi worker pool.
type PHP struct {
	Engine         string   `yaml:"engine"`          // "shared" (one master, one opcache) or "separate" (a process each)
	Binary         string   `yaml:"binary"`          // php-cgi path; "" = php-cgi on PATH
	Workers        int      `yaml:"workers"`         // processes at most
	MinWorkers     int      `yaml:"min_workers"`     // kept running even when idle
	MaxRequests    int      `yaml:"max_requests"`    // recycle a worker after this many
	MaxRSS         Size     `yaml:"max_rss"`         // recycle a worker above this RSS; 0 = no limit
	IdleSuspend    Duration `yaml:"idle_suspend"`    // SIGSTOP a worker idle this long; 0 = never
	IdleExit       Duration `yaml:"idle_exit"`       // end a worker idle this long (down to min_workers); 0 = never
	QueueWait      Duration `yaml:"queue_wait"`      // wait for a free worker, then 503
	RequestTimeout Duration `yaml:"request_timeout"` // kill a worker stuck this long (504); 0 = none
	SlowRequest    Duration `yaml:"slow_request"`    // log requests slower than this; 0 = off
	User           string   `yaml:"user"`            // run workers as this user: never root, never ramjet's own
	Group          string   `yaml:"group"`           // and this group; "" = the user's primary group
	SharedUser     bool     `yaml:"shared_user"`     // let sites with other roots run PHP as the same user
	Env            []string `yaml:"env"`             // the workers' whole environment: "NAME=value", or "NAME" to pass ramjet's
	INIFile        string   `yaml:"ini_file"`        // php.ini instead of php-cgi's own (-c); "" = its own
	INI            []string `yaml:"ini"`             // "key=value" php.ini overrides (-d)
	// Confine: "auto" (Landlock where the kernel has it, unless
	// follow_symlinks), "on" (refuse to run PHP without it) or "off".
	Confine   string   `yaml:"confine"`
	ReadPaths []string `yaml:"read_paths"` // trees PHP may also read when confined (a wp-config.php above the root)
}

// Host is the effective Site for the host names it lists.
type Host struct {
	// Names are lower case, exact ("example.com") or a wildcard
	// ("*.example.com") matching any subdomain but not the bare domain.
	// Compare them with the request's Host lower-cased and without port.
	Names []string `yaml:"names"`
	// AccessLog is the top-level one overlaid with the host's block.
	AccessLog AccessLog `yaml:"access_log"`
	Site      `yaml:",inline"`
	// AdminToken (or AdminTokenFile, a file holding it) lets whoever has
	// it purge this site only, through the admin API: what the site's
	// WordPress plugin is given instead of admin.token.
	AdminToken     string `yaml:"admin_token"`
	AdminTokenFile string `yaml:"admin_token_file"`
	// CacheSize gives the site a page cache of its own, apart from
	// cache.size, so that its crawls evict only its own pages; 0 shares
	// cache.size with the other sites.
	CacheSize Size `yaml:"cache_size"`
}

// SiteToken is the host's admin token: AdminToken, or the first line of
// AdminTokenFile; "" when it has none.
func (h *Host) SiteToken() (string, error) {
	if h.AdminTokenFile == "" {
		return h.AdminToken, nil
	}
	b, err := os.ReadFile(h.AdminTokenFile)
	if err != nil {
		return "", fmt.Errorf("admin token file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

// Default returns the built-in configuration; it passes Validate.
func Default() *Config {
	return &Config{
		Listen: ":8080",
		Admin:  Admin{Listen: "127.0.0.1:9090", ProxyProtocol: defaultProxyProtocol()},
		Log:    Log{Level: "info", Format: "text"},
		// Off until a path is named: a log file is the admin's to place.
		AccessLog: AccessLog{Format: "combined"},
		Server: Server{
			HeaderTimeout:  Duration(10 * time.Second),
			ReadTimeout:    Duration(60 * time.Second),
			WriteTimeout:   Duration(60 * time.Second),
			IdleTimeout:    Duration(120 * time.Second),
			ParkIdle:       true,
			MaxRequestBody: 64 * MiB,
			MaxHeaderBytes: 16 * KiB,
			MaxConns:       10000,
			DrainTimeout:   Duration(30 * time.Second),
			ProxyProtocol:  defaultProxyProtocol(),
		},
		Origin: Origin{
			Servers:        []string{"http://127.0.0.1:8081"},
			ConnectTimeout: Duration(2 * time.Second),
			HeaderTimeout:  Duration(30 * time.Second),
			BodyTimeout:    Duration(60 * time.Second),
			IdleTimeout:    Duration(4 * time.Second),
			MaxConns:       512,
			MaxQueue:       512,
			Health: Health{
				Interval: Duration(5 * time.Second),
				Timeout:  Duration(2 * time.Second),
				Fall:     2,
				Rise:     2,
			},
		},
		Cache: Cache{
			Size:                 256 * MiB,
			MaxObjectSize:        8 * MiB,
			HitForPass:           Duration(10 * time.Second),
			TargetedCacheControl: "Ramjet-Cache-Control",
			PrivateSize:          64 * MiB,
			Compress: Compress{
				Gzip:    true,
				Brotli:  true,
				MinSize: 1 * KiB,
				Types: []string{"text/html", "text/css", "text/plain", "text/xml",
					"application/javascript", "application/json", "application/xml",
					"application/rss+xml", "image/svg+xml"},
			},
		},
		ESI:   ESI{MaxDepth: 3, MaxIncludes: 64, Timeout: Duration(2 * time.Second)},
		Stats: Stats{TopURLs: 50},
		TLS: TLS{OCSP: true, OCSPTimeout: Duration(10 * time.Second), H2MaxStreams: 250, ProxyProtocol: defaultProxyProtocol(),
			H3MaxStreams: 100, H3ZeroRTT: true, H3StreamWindow: 6 << 20, H3ConnWindow: 15 << 20},
		H2C:    H2C{ProxyProtocol: defaultProxyProtocol()},
		RealIP: RealIP{Header: "X-Forwarded-For"},
		Purge: Purge{
			Trusted:    []string{"127.0.0.0/8", "::1/128"},
			AdminAllow: []string{"127.0.0.0/8", "::1/128"},
			Stream:     "ramjet:purge",
			Gap:        "stale",
			GapGrace:   Duration(10 * time.Second),
		},
		Defaults: Site{
			Cache: true,
			ESI:   true,
			BypassCookies: []string{"wordpress_logged_in_*", "wp-postpass_*", "comment_author_*",
				"woocommerce_items_in_cart", "woocommerce_cart_hash"},
			// Analytics and ad click IDs: a page filled without them
			// (the fill drops them too) is the same for every visitor.
			DropQueryParams: []string{"utm_*", "gclid", "fbclid", "_ga", "msclkid", "srsltid", "gbraid", "wbraid",
				"dclid", "ttclid", "twclid", "yclid", "igshid", "mc_cid", "mc_eid", "_hsenc", "_hsmi"},
			LSCacheHeader: true,
			AltSvc:        true,
			WAF:           defaultWAF(),
			Crawler:       defaultCrawler(),
			Warm:          defaultWarm(),
			Docroot: Docroot{
				Serve:           "all",
				Index:           []string{"index.php", "index.html"},
				FrontController: "/index.php",
				Htaccess:        true,
				PHP: PHP{
					Engine:         "shared",
					Workers:        4,
					MinWorkers:     1,
					MaxRequests:    10000,
					IdleSuspend:    Duration(10 * time.Second),
					IdleExit:       Duration(5 * time.Minute),
					QueueWait:      Duration(5 * time.Second),
					RequestTimeout: Duration(60 * time.Second),
					SlowRequest:    Duration(5 * time.Second),
					User:           "www-data",
					Group:          "www-data",
					Confine:        "auto",
				},
			},
		},
	}
}

// defaultProxyProtocol is off, with the header's timeout set for when
// it is turned on.
func defaultProxyProtocol() ProxyProtocol { return ProxyProtocol{Timeout: Duration(5 * time.Second)} }

// clone returns s with its own copies of the lists.
func (s Site) clone() Site {
	s.BypassCookies = slices.Clone(s.BypassCookies)
	s.VaryCookies = slices.Clone(s.VaryCookies)
	s.DropQueryParams = slices.Clone(s.DropQueryParams)
	s.Docroot.Index = slices.Clone(s.Docroot.Index)
	s.Docroot.PHP.Env = slices.Clone(s.Docroot.PHP.Env)
	s.Docroot.PHP.INI = slices.Clone(s.Docroot.PHP.INI)
	s.WAF = s.WAF.clone()
	return s
}

// SlogLevel returns Level as a slog.Level; anything unknown is Info.
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
