package proxy

import (
	"strconv"
	"strings"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/purge"
)

// Purge applies one purge command to the caches; it implements
// purge.Invalidator. A command with a Site touches only that site's pages
// (scope.go); one without is the operator's and touches every site.
func (p *Proxy) Purge(cmd purge.Command) purge.Result {
	defer p.warmAfter(p.warmBefore(cmd)) // warmBefore now, to see what the purge drops
	if cmd.Site != "" {
		p.sites.ofScope(cmd.Site).purges.Inc()
	}
	if cmd.Private {
		return p.purgePrivate(cmd)
	}
	var r purge.Result
	for _, c := range p.publicCaches(cmd.Site) {
		n := p.purgePublic(c, cmd)
		r.Tags = max(r.Tags, n.Tags) // a tag may be held in two caches: still one tag
		r.URLs += n.URLs
		r.Prefixes += n.Prefixes
		r.All = r.All || n.All
		r.Stale += n.Stale
	}
	if p.private != nil {
		p.purgePrivateCopies(cmd)
	}
	return r
}

// publicCaches are the caches a command of site reaches: the shared one
// and the site's own (it may have pages in both, around a reload that
// gave it its share); every cache for the operator.
func (p *Proxy) publicCaches(site string) []*cache.Cache {
	out := []*cache.Cache{p.cache}
	if site == "" {
		return append(out, p.sites.shares()...)
	}
	if st := p.sites.lookup(scopeLabel(site)); st != nil && st.share != nil {
		out = append(out, st.share)
	}
	return out
}

func (p *Proxy) purgePublic(c *cache.Cache, cmd purge.Command) purge.Result {
	var r purge.Result
	for _, t := range cmd.Targets {
		switch t.Kind {
		case purge.KindTag, purge.KindTagPrefix, purge.KindTagSuffix:
			r.Tags += purgeTags(c, cmd.Site, t, cmd.Before)
		case purge.KindURL:
			r.URLs += p.purgeURL(c, cmd, t.Value, t.Soft)
		case purge.KindPrefix:
			r.Prefixes += p.purgePrefix(c, cmd, t.Value, t.Soft)
		case purge.KindAll:
			r.All = true
			if cmd.Gap && cmd.Site == "" {
				n := c.MarkGap(cmd.Grace)
				p.metrics.gapStale.Add(n)
				r.Stale += n
				p.warmGap(c, cmd.Grace)
				continue
			}
			purgeAll(c, cmd.Site, t.Soft, cmd.Before)
		}
	}
	return r
}

// purgeTags purges a tag target within site ("" every site) on c: an
// exact tag of one site in O(1), the rest by a scan of the tag index.
func purgeTags(c *cache.Cache, site string, t purge.Target, before int64) int {
	if t.Kind == purge.KindTag && site != "" {
		if c.PurgeTag(scopedTag(site, t.Value), t.Soft, before) {
			return 1
		}
		return 0
	}
	return c.PurgeTagsMatching(func(stored string) bool {
		scope, tag, ok := strings.Cut(stored, "\x00")
		if !ok || site != "" && scope != site {
			return false
		}
		switch t.Kind {
		case purge.KindTagPrefix:
			return strings.HasPrefix(tag, t.Value)
		case purge.KindTagSuffix:
			return strings.HasSuffix(tag, t.Value)
		}
		return tag == t.Value
	}, t.Soft, before)
}

// purgeAll purges everything of site ("" every site) on c.
func purgeAll(c *cache.Cache, site string, soft bool, before int64) {
	if site == "" {
		c.PurgeAll(soft, before)
		return
	}
	c.PurgeTag(siteAll(site), soft, before)
}

// purgePrivate applies "private, …" to one user's private entries: their
// tags live in the user's namespace, "*" is all of theirs.
func (p *Proxy) purgePrivate(cmd purge.Command) purge.Result {
	var r purge.Result
	id, err := strconv.ParseUint(cmd.Identity, 16, 64)
	if p.private == nil || err != nil || id == 0 {
		return r
	}
	for _, t := range cmd.Targets {
		tag := t.Value
		switch t.Kind {
		case purge.KindAll:
			tag = "*"
		case purge.KindTag:
		default:
			continue // URL and wildcard forms are not scoped per user
		}
		if p.private.PurgeTag(privateTag(id, tag), t.Soft, cmd.Before) {
			r.Tags++
		}
	}
	return r
}

// purgePrivateCopies applies a public purge to the private cache too:
// "public:" tags of private entries, everything, and URLs, in the same
// scope.
func (p *Proxy) purgePrivateCopies(cmd purge.Command) {
	for _, t := range cmd.Targets {
		switch t.Kind {
		case purge.KindTag, purge.KindTagPrefix, purge.KindTagSuffix:
			purgeTags(p.private, cmd.Site, t, cmd.Before)
		case purge.KindAll:
			if cmd.Gap && cmd.Site == "" {
				p.private.MarkGap(cmd.Grace)
				continue
			}
			purgeAll(p.private, cmd.Site, t.Soft, cmd.Before)
		case purge.KindURL, purge.KindPrefix:
			host, path, query := splitURL(cmd.Host, t.Value)
			exact := t.Kind == purge.KindURL
			want := string(appendPath(nil, []byte(path)))
			if exact {
				want = p.pathKey(path, query)
			}
			in := p.hostsIn(cmd.Site, host)
			p.private.PurgeKeys(func(key string) bool {
				k, h := keyPathOf(key[strings.IndexByte(key, '|')+1:])
				return in(h) && (k == want || !exact && strings.HasPrefix(k, want))
			}, t.Soft)
		}
	}
}

// hostsIn returns the test a key's host passes to be purged by a command
// of site for host: any host of the site (site set), else host (if
// given), else any.
func (p *Proxy) hostsIn(site, host string) func(keyHost string) bool {
	r := p.gen.Load().router
	host = strings.ToLower(string(stripPort([]byte(host))))
	switch {
	case site != "":
		return func(h string) bool { return scopeOf(r.route([]byte(h)), []byte(h)) == site }
	case host != "":
		return func(h string) bool { return string(stripPort([]byte(h))) == host }
	}
	return func(string) bool { return true }
}

// purgeURL purges every variant of one URL, under both schemes: for a
// site, on every host name of the site (a URL of another site purges
// nothing); for the operator, on its host, or on every host when it names
// none.
func (p *Proxy) purgeURL(c *cache.Cache, cmd purge.Command, raw string, soft bool) int {
	host, path, query := splitURL(cmd.Host, raw)
	router := p.gen.Load().router
	hosts := []string{host}
	switch {
	case cmd.Site != "":
		if host != "" && scopeOf(router.route([]byte(host)), []byte(host)) != cmd.Site {
			return 0
		}
		hosts = router.namesOf(cmd.Site, host)
	case host == "":
		want := p.pathKey(path, query)
		return c.PurgeKeys(func(key string) bool {
			k, _ := keyPathOf(key)
			return k == want
		}, soft)
	}
	n := 0
	var key []byte
	var params [][]byte
	for _, h := range hosts {
		s := router.route([]byte(h))
		for _, scheme := range [][]byte{schemeHTTP, schemeHTTPS} {
			key = appendKey(key[:0], &params, &target{scheme, []byte(h), []byte(path), []byte(query)}, keyDrop{site: s.drop})
			if c.PurgeKey(c.Hash(key), key, soft) {
				n++
			}
		}
	}
	return n
}

// purgePrefix purges every URL starting with a prefix ("/blog/"): on the
// site's hosts, on the given host, or (operator, no host) everywhere.
func (p *Proxy) purgePrefix(c *cache.Cache, cmd purge.Command, raw string, soft bool) int {
	host, path, _ := splitURL(cmd.Host, raw)
	prefix := string(appendPath(nil, []byte(path)))
	in := p.hostsIn(cmd.Site, host)
	if cmd.Site != "" && host != "" && !in(host) {
		return 0 // another site's prefix
	}
	return c.PurgeKeys(func(key string) bool {
		k, h := keyPathOf(key)
		return in(h) && strings.HasPrefix(k, prefix)
	}, soft)
}

// pathKey is the "/path?query" part of a cache key for a URL given
// without a host, normalised with the default site's rules.
func (p *Proxy) pathKey(path, query string) string {
	var params [][]byte
	return string(appendQuery(appendPath(nil, []byte(path)), &params, []byte(query), keyDrop{site: p.gen.Load().router.def.drop}))
}

var _ purge.Invalidator = (*Proxy)(nil)
