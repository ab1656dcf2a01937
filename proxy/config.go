package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
	"github.com/ramjet-proxy/ramjet/proxy/realip"
	"github.com/ramjet-proxy/ramjet/proxy/sitestats"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
	"github.com/ramjet-proxy/ramjet/purge"
)

// Config is one generation of proxy policy. Reload swaps it whole.
type Config struct {
	Origin origin.Config
	// Default applies to requests whose Host matches no site.
	Default Site
	Sites   []Site
	// MaxObjectSize bounds the body of a stored response; larger ones
	// stream through uncached. 0 means 8 MiB.
	MaxObjectSize int64
	// Stats bounds what each site keeps for its owner (the URL list).
	Stats sitestats.Config
	// MaxRequestBody bounds request bodies: a larger declared length, or a
	// chunked body that grows past it, gets 413. 0 means no limit.
	MaxRequestBody int64
	// HitForPass is how long a URL that answered uncacheably skips request
	// coalescing; 0 disables the memory.
	HitForPass time.Duration
	Compress   Compress
	ESI        ESIConfig
	// PurgeAllow lists the client networks allowed to send PURGE and
	// REFRESH; empty means loopback only. Others get 405.
	PurgeAllow []netip.Prefix
	// PurgeTokens are what a PURGE or REFRESH from PurgeAllow needs to
	// name a site that has a token, or every site (purge.Tokens.MayPurge).
	PurgeTokens purge.Tokens
	// RealIP names the trusted proxies whose forwarding header names the
	// client; the zero value trusts none.
	RealIP realip.Config
	// HTTPSPort is the port HTTPS redirects point to; 0 or 443 leave it
	// out of the URL.
	HTTPSPort int
	// AltSvc is the Alt-Svc value that advertises HTTP/3 (`h3=":443";
	// ma=86400`) on responses sent over the TLS listener, for the sites
	// whose AltSvc is on; "" advertises nothing.
	AltSvc string
	// Targeted names the response field addressed to this cache alone
	// (RFC 9213: "Ramjet-Cache-Control"): it governs before
	// CDN-Cache-Control and Cache-Control and is kept from clients.
	Targeted string
	// DrainTimeout bounds how long a replaced generation's requests (its
	// docroots' and PHP pools') may take to finish after a reload, and
	// those of the last one at Close; 0 means 30 s. Past it, PHP workers
	// still busy are killed.
	DrainTimeout time.Duration
}

func (c *Config) drainTimeout() time.Duration {
	if c.DrainTimeout <= 0 {
		return 30 * time.Second
	}
	return c.DrainTimeout
}

// Site is the cache policy of one or more host names.
type Site struct {
	// Names are exact host names or "*.suffix" wildcards, case-insensitive.
	Names []string
	// Cache off forwards everything uncached.
	Cache bool
	// ESI assembles pages whose response asks for it; off passes markup.
	ESI bool
	// DefaultTTL applies to responses without freshness information;
	// 0 leaves them uncached.
	DefaultTTL time.Duration
	// DefaultTTLWithCookies are the request paths ("/static/*" by
	// prefix) where DefaultTTL and Heuristic also apply to a request
	// with a session cookie; elsewhere they apply only to requests whose
	// cookies identify nobody (anonymousCookie) or select the variant.
	DefaultTTLWithCookies []string
	// Heuristic turns on heuristic freshness for responses with a
	// Last-Modified and no explicit freshness (RFC 9111 4.2.2).
	Heuristic bool
	// Grace is the stale window when a response gives none: a stale copy
	// is served while one request refreshes it, or when the origin fails.
	Grace time.Duration
	// CacheSetCookie stores responses carrying Set-Cookie (without the
	// cookie); off by default, as LSCache's respCookieCache.
	CacheSetCookie bool
	// DebugHeaders keeps the application's internal cache headers on
	// responses to clients.
	DebugHeaders bool
	// BypassCookies: a request carrying one of these skips the cache.
	// A trailing "*" matches by prefix.
	BypassCookies []string
	// VaryCookies become part of every cache key of the site.
	VaryCookies []string
	// AnonymousCookies identify nobody, beyond anonymousCookie's list
	// (a trailing "*" matches by prefix): left out of the private
	// identity, and no bar to DefaultTTL.
	AnonymousCookies []string
	// DropQueryParams are left out of the cache key ("utm_*" by prefix).
	DropQueryParams []string
	// LSCacheHeader sends "X-LSCACHE: on" upstream (the LiteSpeed Cache
	// WordPress plugin then emits its cache headers) and X-LiteSpeed-Cache
	// on the answers served from a cache entry (lsstatus.go).
	LSCacheHeader bool
	// Docroot, when set, serves the site from a directory with its own
	// PHP workers instead of (or, PHPOnly, beside) the origin.
	Docroot *Docroot
	// HTTPSRedirect answers requests that did not come over TLS with a
	// redirect to the same URL over HTTPS (PURGE and REFRESH excepted).
	HTTPSRedirect bool
	// HSTS is the Strict-Transport-Security value added to responses
	// sent over TLS that carry none; "" adds nothing.
	HSTS string
	// AltSvc adds Config.AltSvc to its responses sent over the TLS
	// listener; off keeps the site's clients on TCP.
	AltSvc bool
	// CacheSize gives a configured site a cache of its own, of this many
	// bytes, apart from the shared one; 0 shares it.
	CacheSize int64
	// AccessLog is where the site's client requests are logged.
	AccessLog AccessLog
	// WAF inspects the site's requests that may reach its upstream.
	WAF WAF
	// HtaccessRoot (proxy mode) is the origin's document root, whose
	// .htaccess files' LiteSpeed cache rules ramjet applies; "" none. A
	// docroot site with Docroot.Htaccess reads its own root instead.
	HtaccessRoot string
	// Crawler bounds what the LiteSpeed Cache plugin's crawler sends to
	// the site's upstream; nil: it is served as anyone.
	Crawler *Crawler
	// Warm fetches the most requested pages a purge dropped again
	// (warmup.go); nil: their visitors do.
	Warm *Warm
}

// WAF is a site's firewall policy (guard.go). The zero value inspects
// nothing.
type WAF struct {
	// Mode off inspects nothing; detect inspects and logs what would be
	// blocked, blocking nothing; block stops it.
	Mode WAFMode
	// Rules is the compiled rule set, shared with the sites of equal rules.
	Rules *waf.Set
	// Allow are client networks never inspected.
	Allow []netip.Prefix
	// SkipStatic leaves the static files of a docroot site uninspected.
	SkipStatic bool
	// BodyLimit is how much of a request body is inspected (at most
	// waf.MaxBody; 0 means 8 MiB). A larger body is refused with 413,
	// or with BodyPass goes on uninspected (counted).
	BodyLimit int64
	BodyPass  bool
	// Status answers a blocked request (0 means 403), with Page as its
	// body (nil: a short built-in one).
	Status int
	Page   []byte
}

// WAFMode is what a site's WAF does with what it finds.
type WAFMode uint8

// The WAF modes.
const (
	WAFOff WAFMode = iota
	WAFDetect
	WAFBlock
)

// AccessLog names a site's access log. Sites naming one path share its
// file, which stays open across reloads that keep naming it.
type AccessLog struct {
	// Path is the file (appended to, created if missing), or
	// accesslog.Stdout; "" logs nothing.
	Path   string
	Format accesslog.Format
}

// Compress selects the encodings stored next to each compressible body.
type Compress struct {
	Gzip, Brotli bool
	// MinSize: smaller bodies are not compressed.
	MinSize int
	// Types are media types (without parameters) worth compressing.
	Types []string
}

// site is a Site compiled for the request path.
type site struct {
	Site
	up          upstream // the origin pool, or the site's docroot handler
	bypass      *patterns
	drop        *patterns
	cookieTTL   *patterns // DefaultTTLWithCookies
	anonymous   *patterns // AnonymousCookies
	varyCookies []string
	hsts        []byte // HSTS, kept as bytes for the hit path
	altSvc      []byte // Config.AltSvc when the site's AltSvc is on
	targeted    string // Config.Targeted: the field addressed to ramjet alone
	// scope names the site's purge namespace (scope.go); "" for the
	// default site, whose every host is a scope of its own.
	scope string
	// cache is where the site's pages are stored (its own share or the
	// shared cache) and state what it keeps across reloads (sitestate.go).
	cache *cache.Cache
	state *siteState
	// log is where its requests are logged; nil: nowhere.
	log *siteLog
	// wafPage is the body of a blocked request's answer.
	wafPage []byte
	// ht reads the site's .htaccess files (stageRewrite); nil: none.
	ht *htaccess.Tree
	// lsRules keeps what fills need of the rules' cache directives,
	// made once per distinct value instead of per fill.
	lsRules lsRulesCache
	// crawler is the Crawler budget at run time; nil: none.
	crawler *crawlerBudget
	// gauge is the load of the site's upstream pool; nil: none.
	gauge loadGauge
}

// classify is classify with the field addressed to ramjet alone counted
// among the application's internal ones (never sent to clients).
func (s *site) classify(name []byte) headerClass {
	if s.targeted != "" && len(name) == len(s.targeted) && bytes.EqualFold(name, []byte(s.targeted)) {
		return headerInternal
	}
	return classify(name)
}

// compileSite compiles s, one of cfg's sites, whose purge namespace is
// scope ("" for the default site). Its parts (state, cache, log, upstream,
// .htaccess rules) are the generation's to give (builder.site).
func compileSite(cfg *Config, s Site, scope string) *site {
	cs := &site{
		Site:        s,
		scope:       scope,
		targeted:    cfg.Targeted,
		hsts:        []byte(s.HSTS),
		bypass:      newPatterns(s.BypassCookies),
		drop:        newPatterns(s.DropQueryParams),
		cookieTTL:   newPatterns(s.DefaultTTLWithCookies),
		anonymous:   newPatterns(s.AnonymousCookies),
		varyCookies: s.VaryCookies,
		wafPage:     blockPage(s.WAF.Page),
		crawler:     newCrawlerBudget(s.Crawler),
	}
	if s.AltSvc && cfg.AltSvc != "" {
		cs.altSvc = []byte(cfg.AltSvc)
	}
	return cs
}

// siteName names a site in logs and metrics (and its PHP pool): its
// first host name.
func siteName(s *site) string {
	if len(s.Names) == 0 {
		return "default"
	}
	return s.Names[0]
}

// router maps a Host header to its site.
type router struct {
	exact    map[string]*site
	suffixes []suffixSite
	def      *site
}

// sites lists every compiled site once, the default last.
func (r *router) sites() []*site {
	seen := map[*site]bool{}
	var out []*site
	add := func(s *site) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range r.exact {
		add(s)
	}
	for _, s := range r.suffixes {
		add(s.site)
	}
	add(r.def)
	return out
}

type suffixSite struct {
	suffix string // ".example.com"
	site   *site
}

func newRouter(cfg Config) (*router, error) {
	r := &router{exact: make(map[string]*site), def: compileSite(&cfg, cfg.Default, "")}
	var errs []error
	for _, s := range cfg.Sites {
		cs := compileSite(&cfg, s, siteScope(s.Names))
		for _, n := range s.Names {
			n = strings.ToLower(n)
			if suf, ok := strings.CutPrefix(n, "*"); ok {
				r.suffixes = append(r.suffixes, suffixSite{suffix: suf, site: cs})
				continue
			}
			if _, dup := r.exact[n]; dup {
				errs = append(errs, fmt.Errorf("proxy: host %q configured twice", n))
			}
			r.exact[n] = cs
		}
	}
	return r, errors.Join(errs...)
}

// namesOf lists the host names a site answers to, lower case, as cache
// keys hold them: every exact name of the configured site whose scope is
// site, plus host as given (it may carry a port, or match a wildcard
// name), or host alone for a host no entry names.
func (r *router) namesOf(site, host string) []string {
	host = strings.ToLower(host)
	var names []string
	for name, s := range r.exact {
		if s.scope == site {
			names = append(names, name)
		}
	}
	if host != "" && !slices.Contains(names, host) {
		names = append(names, host)
	}
	if len(names) == 0 {
		names = append(names, site) // a host no entry names is its own scope
	}
	return names
}

// maxRouted is the longest name (without the port) route matches to a
// site other than the default.
const maxRouted = 128

// route returns the site of a Host header value; it does not allocate.
func (r *router) route(host []byte) *site {
	host = stripPort(host)
	var buf [maxRouted]byte
	if len(host) > len(buf) {
		return r.def
	}
	h := buf[:len(host)]
	for i, c := range host {
		h[i] = lower(c)
	}
	return r.routeName(h)
}

// routeNormal is route for a Host settleTarget wrote, lower case
// already: the name is looked up as it is, without a copy.
func (r *router) routeNormal(host []byte) *site {
	if host = stripPort(host); len(host) > maxRouted {
		return r.def
	}
	return r.routeName(host)
}

// routeName is the site of a lower-case name.
func (r *router) routeName(h []byte) *site {
	if s, ok := r.exact[string(h)]; ok {
		return s
	}
	for _, ss := range r.suffixes {
		if len(h) > len(ss.suffix) && string(h[len(h)-len(ss.suffix):]) == ss.suffix {
			return ss.site
		}
	}
	return r.def
}

func stripPort(host []byte) []byte {
	if len(host) > 0 && host[0] == '[' { // [::1]:8080
		if i := bytes.LastIndexByte(host, ']'); i >= 0 {
			return host[:i+1]
		}
		return host
	}
	for i := len(host) - 1; i >= 0; i-- {
		switch c := host[i]; {
		case c == ':':
			return host[:i]
		case c < '0' || c > '9':
			return host
		}
	}
	return host
}
