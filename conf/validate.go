package conf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Validate checks c for values that decode but make no sense. It returns
// errors.Join of one *Error per problem, each naming the key path, or nil.
func (c *Config) Validate() error {
	var p problems
	p.listen("listen", c.Listen)
	c.validateListens(&p)
	c.Admin.validate(&p, c.Listen)
	c.Log.validate(&p)
	c.validateAccessLogs(&p)
	c.Server.validate(&p)
	c.Origin.validate(&p)
	c.Cache.validate(&p)
	c.Purge.validate(&p)
	c.ESI.validate(&p)
	c.Stats.validate(&p)
	c.validateTLS(&p)
	c.RealIP.validate(&p)
	c.Defaults.validate(&p, "defaults", nil)
	c.validateHosts(&p)
	c.validatePHPSites(&p)
	return errors.Join(p...)
}

func (a *Admin) validate(p *problems, mainListen string) {
	a.ProxyProtocol.validate(p, "admin.proxy_protocol")
	if a.Listen == "" {
		return // admin listener disabled
	}
	host, ok := p.listen("admin.listen", a.Listen)
	if ok && a.Listen == mainListen {
		p.add("admin.listen", "must differ from listen")
	}
	if ok && a.Token == "" && !isLoopback(host) {
		p.add("admin.listen", fmt.Sprintf("%q is not a loopback address, so admin.token must be set", a.Listen))
	}
	for i, n := range a.Names {
		if !isHostName(n) || n != strings.ToLower(n) {
			p.add(fmt.Sprintf("admin.names[%d]", i), fmt.Sprintf("%q is not a lower-case host name (no port, no trailing dot)", n))
		}
	}
	if strings.ContainsFunc(a.Token, isSpaceOrCtl) {
		p.add("admin.token", "must not contain spaces or control characters")
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (l *Log) validate(p *problems) {
	p.oneOf("log.level", l.Level, "debug", "info", "warn", "error")
	p.oneOf("log.format", l.Format, "text", "json")
}

func (s *Server) validate(p *problems) {
	p.nonNegative("server.header_timeout", s.HeaderTimeout)
	p.nonNegative("server.read_timeout", s.ReadTimeout)
	p.nonNegative("server.write_timeout", s.WriteTimeout)
	p.nonNegative("server.idle_timeout", s.IdleTimeout)
	p.nonNegative("server.drain_timeout", s.DrainTimeout)
	p.minSize("server.max_request_body", s.MaxRequestBody, 1)
	p.minSize("server.max_header_bytes", s.MaxHeaderBytes, 1)
	p.minInt("server.max_conns", s.MaxConns, 1)
	p.minInt("server.max_conns_per_ip", s.MaxConnsPerIP, 0)
	s.ProxyProtocol.validate(p, "server.proxy_protocol")
}

func (o *Origin) validate(p *problems) {
	if len(o.Servers) == 0 {
		p.add("origin.servers", "must list at least one server")
	}
	for i, s := range o.Servers {
		path := "origin.servers[" + strconv.Itoa(i) + "]"
		if j := slices.Index(o.Servers, s); j < i {
			p.add(path, fmt.Sprintf("%q is already listed", s))
		} else if msg := checkOriginURL(s); msg != "" {
			p.add(path, msg)
		}
	}
	p.nonNegative("origin.connect_timeout", o.ConnectTimeout)
	p.nonNegative("origin.header_timeout", o.HeaderTimeout)
	p.nonNegative("origin.body_timeout", o.BodyTimeout)
	p.positive("origin.idle_timeout", o.IdleTimeout)
	p.minInt("origin.max_conns", o.MaxConns, 1)
	p.minInt("origin.max_queue", o.MaxQueue, 0)
	o.Health.validate(p)
}

// checkOriginURL returns what is wrong with an origin server URL, or "".
func checkOriginURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL", s)
	case u.Scheme != "http":
		return fmt.Sprintf("%q: scheme must be http", s)
	case u.Hostname() == "":
		return fmt.Sprintf("%q has no host", s)
	case u.Port() == "":
		return fmt.Sprintf("%q needs an explicit port", s)
	case u.User != nil || u.Opaque != "" || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Sprintf("%q must be only http://host:port", s)
	}
	if _, err := strconv.ParseUint(u.Port(), 10, 16); err != nil {
		return fmt.Sprintf("%q has a bad port", s)
	}
	return ""
}

func (h *Health) validate(p *problems) {
	if h.Path != "" && (!strings.HasPrefix(h.Path, "/") || strings.ContainsFunc(h.Path, isSpaceOrCtl)) {
		p.add("origin.health.path", fmt.Sprintf("%q must start with \"/\" and contain no spaces", h.Path))
	}
	if h.Path != "" {
		p.positive("origin.health.interval", h.Interval)
		p.positive("origin.health.timeout", h.Timeout)
	} else {
		p.nonNegative("origin.health.interval", h.Interval)
		p.nonNegative("origin.health.timeout", h.Timeout)
	}
	if h.Timeout > h.Interval && h.Interval > 0 {
		p.add("origin.health.timeout", fmt.Sprintf("%s is longer than origin.health.interval (%s)", h.Timeout, h.Interval))
	}
	p.minInt("origin.health.fall", h.Fall, 1)
	p.minInt("origin.health.rise", h.Rise, 1)
}

func (c *Cache) validate(p *problems) {
	if c.PrivateSize != 0 {
		p.minSize("cache.private_size", c.PrivateSize, MiB)
	}
	p.minSize("cache.size", c.Size, MiB)
	p.minSize("cache.max_object_size", c.MaxObjectSize, 1)
	if c.Size >= MiB && c.MaxObjectSize > c.Size {
		p.add("cache.max_object_size", fmt.Sprintf("%s is larger than cache.size (%s)", c.MaxObjectSize, c.Size))
	}
	p.nonNegative("cache.hit_for_pass", c.HitForPass)
	c.Disk.validate(p)
	if n := c.TargetedCacheControl; n != "" && !validFieldName(n) {
		p.add("cache.targeted_cache_control", fmt.Sprintf("%q is not a header field name", n))
	}
	p.minSize("cache.compress.min_size", c.Compress.MinSize, 0)
	for i, t := range c.Compress.Types {
		if msg := checkMediaType(t); msg != "" {
			p.add("cache.compress.types["+strconv.Itoa(i)+"]", msg)
		}
	}
}

// checkMediaType returns what is wrong with a "type/subtype", or "".
func checkMediaType(t string) string {
	typ, sub, ok := strings.Cut(t, "/")
	switch {
	case !ok || typ == "" || sub == "" || strings.ContainsAny(t, "*;, \t") || strings.Count(t, "/") != 1:
		return fmt.Sprintf("%q is not a media type like text/html (no parameters or wildcards)", t)
	case t != strings.ToLower(t):
		return fmt.Sprintf("%q must be lower case", t)
	}
	return ""
}

func (p *problems) listen(path, addr string) (host string, ok bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.add(path, fmt.Sprintf("%q is not host:port", addr))
		return "", false
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		p.add(path, fmt.Sprintf("%q has a bad port", addr))
		return "", false
	}
	return host, true
}

func (p *problems) oneOf(path, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		p.add(path, fmt.Sprintf("%q is not one of %s", v, strings.Join(allowed, ", ")))
	}
}

func (p *problems) nonNegative(path string, d Duration) {
	if d < 0 {
		p.add(path, fmt.Sprintf("%s is negative", d))
	}
}

func (p *problems) positive(path string, d Duration) {
	if d <= 0 {
		p.add(path, fmt.Sprintf("must be positive, got %s", d))
	}
}

func (p *problems) minSize(path string, s, low Size) {
	if s < low {
		p.add(path, fmt.Sprintf("must be at least %s, got %s", low, s))
	}
}

func (p *problems) minInt(path string, n, low int) {
	if n < low {
		p.add(path, fmt.Sprintf("must be at least %d, got %d", low, n))
	}
}

func isSpaceOrCtl(r rune) bool { return r <= ' ' || r == 0x7f }

func (u *Purge) validate(p *problems) {
	for i, n := range u.Trusted {
		if _, err := ParsePrefix(n); err != nil {
			p.add(fmt.Sprintf("purge.trusted[%d]", i), err.Error())
		}
	}
	for i, n := range u.AdminAllow {
		if _, err := ParsePrefix(n); err != nil {
			p.add(fmt.Sprintf("purge.admin_allow[%d]", i), err.Error())
		}
	}
	if u.Redis != "" {
		if r, err := url.Parse(u.Redis); err != nil || (r.Scheme != "redis" && r.Scheme != "rediss" && r.Scheme != "unix") {
			p.add("purge.redis", fmt.Sprintf("%q is not a redis://, rediss:// or unix:// URL", u.Redis))
		}
	}
	if strings.ContainsFunc(u.Node, isSpaceOrCtl) {
		p.add("purge.node", "must not contain spaces or control characters")
	}
	if u.Stream == "" || strings.ContainsFunc(u.Stream, isSpaceOrCtl) {
		p.add("purge.stream", "must be a non-empty key without spaces")
	}
	if u.Gap != "stale" && u.Gap != "flush" {
		p.add("purge.gap", fmt.Sprintf("%q is not stale or flush", u.Gap))
	}
	if u.GapGrace <= 0 || time.Duration(u.GapGrace) > time.Hour {
		p.add("purge.gap_grace", "must be more than 0 and at most 1h")
	}
	u.validateKeys(p)
}

// ParsePrefix reads a network as CIDR ("10.0.0.0/8") or a single address.
func ParsePrefix(s string) (netip.Prefix, error) {
	if pfx, err := netip.ParsePrefix(s); err == nil {
		return pfx.Masked(), nil
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an address or CIDR network", s)
	}
	return netip.PrefixFrom(addr, addr.BitLen()), nil
}

func (e *ESI) validate(p *problems) {
	p.minInt("esi.max_depth", e.MaxDepth, 1)
	p.minInt("esi.max_includes", e.MaxIncludes, 1)
	p.positive("esi.timeout", e.Timeout)
	for i, h := range e.AllowHosts {
		if !isHostName(strings.ToLower(h)) {
			p.add(fmt.Sprintf("esi.allow_hosts[%d]", i), fmt.Sprintf("%q is not a host name", h))
		}
	}
}

// validFieldName reports whether n is an HTTP field name (a token).
func validFieldName(n string) bool {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", rune(c)) {
			return false
		}
	}
	return n != ""
}

// maxTopURLs bounds stats.top_urls: the lists cost about 200 bytes per
// URL and site, and a longer one says nothing more to a site's owner.
const maxTopURLs = 1000

func (s *Stats) validate(p *problems) {
	if s.TopURLs < 0 || s.TopURLs > maxTopURLs {
		p.add("stats.top_urls", fmt.Sprintf("must be 0 to %d, got %d", maxTopURLs, s.TopURLs))
	}
}
