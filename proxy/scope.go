package proxy

import (
	"strings"
)

// A site's purges reach only its own pages. Every stored entry's tags live
// in its site's namespace ("site\x00tag"), and each entry also carries its
// site's all-tag ("site\x02", which no tag of a response can spell), so
// identical tag names of two sites never meet and "*" from a site is all
// of that site. The site is the configured hosts[]
// entry that answered (all its names, both schemes), or, for a host no
// entry names, that host alone.

// siteScope is the name of a configured site's namespace: its first
// host name, lower case. cmd uses it too, to give site tokens their site.
func siteScope(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return strings.ToLower(names[0])
}

// SiteScope is the scope name purges of the site with these host names
// carry (purge.Command.Site).
func SiteScope(names []string) string { return siteScope(names) }

// scopeOf is the scope of a request to s for host: the configured site's,
// or the host's own for the default site.
func scopeOf(s *site, host []byte) string {
	if s.scope != "" {
		return s.scope
	}
	return strings.ToLower(string(stripPort(host)))
}

// ScopeOf is the scope the site answering host purges in: what the admin
// API checks a site token against. host is read as a request's Host is
// (settleTarget): "A.TEST." is a.test's.
func (p *Proxy) ScopeOf(host string) string {
	h := []byte(normalHost(host))
	return scopeOf(p.gen.Load().router.route(h), h)
}

// scopedTag is tag in scope's namespace.
func scopedTag(scope, tag string) string { return scope + "\x00" + tag }

// scopedTags maps a response's tags into its site's namespace and adds the
// site's all-tag.
func scopedTags(scope string, tags []string) []string {
	out := make([]string, 0, len(tags)+1)
	for _, t := range tags {
		out = append(out, scopedTag(scope, t))
	}
	return append(out, siteAll(scope))
}

// siteAll is the tag every entry of scope carries: a purge of "*" from
// the site. It has no "\x00", so tag patterns never match it.
func siteAll(scope string) string { return scope + "\x02" }
