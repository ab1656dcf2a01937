package purge

import (
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// HostGuard keeps browsers away from the admin listener. Without a token
// it takes any local caller, and a browser on the host is one: a page on
// attacker.example that rebinds its name to 127.0.0.1 reads and posts to
// it as its own origin, and any page can post it a form. So it answers only
// requests whose Host is an address (a browser sends one only for a URL
// that names it) or one of its names, and refuses a state-changing request
// a page of another origin sent. Clients that are no browser (the CLI,
// the WordPress plugin, curl, health checks) send neither Origin nor
// Sec-Fetch-Site, and the listener's address or no Host at all.
type HostGuard struct {
	names map[string]bool
}

// NewHostGuard returns a guard that answers to names (lower case, no
// port) besides "localhost" and any address.
func NewHostGuard(names []string) *HostGuard {
	g := &HostGuard{names: map[string]bool{"localhost": true}}
	for _, n := range names {
		g.names[strings.ToLower(n)] = true
	}
	return g
}

// Check refuses a request a browser may have sent on a page's behalf:
// 421 for a Host that is not the listener's, 403 for a state-changing
// request from another origin. It answers nothing when it lets the
// request through, and reports whether it did.
func (g *HostGuard) Check(ctx *fasthttp.RequestCtx) bool {
	host := ctx.Request.Header.Host()
	if !g.answers(host) {
		ctx.Error("Misdirected Request: this Host is not the admin listener's (admin.names)\n", fasthttp.StatusMisdirectedRequest)
		return false
	}
	if changesState(ctx.Method()) && crossOrigin(ctx, host) {
		ctx.Error("Forbidden: a request from another origin\n", fasthttp.StatusForbidden)
		return false
	}
	return true
}

// answers reports whether host (a Host header) names this listener: none
// at all (HTTP/1.0), an IP address, or one of its names.
func (g *HostGuard) answers(host []byte) bool {
	if len(host) == 0 {
		return true
	}
	h := hostOnly(string(host))
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil && a.Zone() == "" {
		return true
	}
	return g.names[strings.ToLower(h)]
}

// hostOnly is host without its port.
func hostOnly(host string) string {
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i >= 0 {
			return host[:i+1]
		}
		return host
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.Count(host, ":") == 1 {
		return host[:i]
	}
	return host
}

// changesState: every method but the safe ones.
func changesState(method []byte) bool {
	switch string(method) {
	case fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodOptions:
		return false
	}
	return true
}

// crossOrigin reports a request a browser sent for a page of another
// origin than the listener's: by Sec-Fetch-Site, or by an Origin that is
// not this scheme and Host ("null" included: a sandboxed page).
func crossOrigin(ctx *fasthttp.RequestCtx, host []byte) bool {
	if site := string(ctx.Request.Header.Peek("Sec-Fetch-Site")); site != "" && site != "same-origin" && site != "none" {
		return true
	}
	origin := ctx.Request.Header.Peek("Origin")
	if len(origin) == 0 {
		return false
	}
	scheme := "http://"
	if ctx.IsTLS() {
		scheme = "https://"
	}
	return !strings.EqualFold(string(origin), scheme+string(host))
}
