package proxy

import (
	"strconv"
	"strings"

	"github.com/ramjet-proxy/ramjet/purge"
)

// Purge applies one purge command to the cache; it implements
// purge.Invalidator. Private commands touch nothing yet: private entries
// are not cached until the ESI issue brings the private cache.
func (p *Proxy) Purge(cmd purge.Command) purge.Result {
	if cmd.Private {
		return p.purgePrivate(cmd)
	}
	r := p.purgePublic(cmd)
	if p.private != nil {
		p.purgePrivateCopies(cmd)
	}
	return r
}

func (p *Proxy) purgePublic(cmd purge.Command) purge.Result {
	var r purge.Result
	for _, t := range cmd.Targets {
		switch t.Kind {
		case purge.KindTag:
			if p.cache.PurgeTag(t.Value, t.Soft, cmd.Before) {
				r.Tags++
			}
		case purge.KindTagPrefix:
			r.Tags += p.cache.PurgeTagsMatching(func(tag string) bool { return strings.HasPrefix(tag, t.Value) }, t.Soft, cmd.Before)
		case purge.KindTagSuffix:
			r.Tags += p.cache.PurgeTagsMatching(func(tag string) bool { return strings.HasSuffix(tag, t.Value) }, t.Soft, cmd.Before)
		case purge.KindURL:
			r.URLs += p.purgeURL(cmd.Host, t.Value, t.Soft)
		case purge.KindPrefix:
			r.Prefixes += p.purgePrefix(cmd.Host, t.Value, t.Soft)
		case purge.KindAll:
			p.cache.PurgeAll(t.Soft, cmd.Before)
			r.All = true
		}
	}
	return r
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
// "public:" tags of private entries, everything, and URLs.
func (p *Proxy) purgePrivateCopies(cmd purge.Command) {
	for _, t := range cmd.Targets {
		switch t.Kind {
		case purge.KindTag:
			p.private.PurgeTag(t.Value, t.Soft, cmd.Before)
		case purge.KindAll:
			p.private.PurgeAll(t.Soft, cmd.Before)
		case purge.KindURL, purge.KindPrefix:
			_, path, query := splitURL(cmd.Host, t.Value)
			exact := t.Kind == purge.KindURL
			want := string(appendPath(nil, []byte(path)))
			if exact {
				want = p.pathKey(path, query)
			}
			p.private.PurgeKeys(func(key string) bool {
				k, _ := keyPathOf(key[strings.IndexByte(key, '|')+1:])
				return k == want || !exact && strings.HasPrefix(k, want)
			}, t.Soft)
		}
	}
}

// purgeURL purges every variant of one URL, under both schemes. A path
// without a host purges it on every host.
func (p *Proxy) purgeURL(host, raw string, soft bool) int {
	host, path, query := splitURL(host, raw)
	if host == "" {
		want := p.pathKey(path, query)
		return p.cache.PurgeKeys(func(key string) bool {
			k, _ := keyPathOf(key)
			return k == want
		}, soft)
	}
	s := p.gen.Load().router.route([]byte(host))
	n := 0
	var key []byte
	var params [][]byte
	for _, scheme := range [][]byte{schemeHTTP, schemeHTTPS} {
		key = appendKey(key[:0], &params, &target{scheme, []byte(host), []byte(path), []byte(query)}, s.drop)
		if p.cache.PurgeKey(p.cache.Hash(key), key, soft) {
			n++
		}
	}
	return n
}

// purgePrefix purges every URL starting with a prefix ("/blog/" on one
// host, or on every host when no host is known).
func (p *Proxy) purgePrefix(host, raw string, soft bool) int {
	host, path, _ := splitURL(host, raw)
	prefix := string(appendPath(nil, []byte(path)))
	host = strings.ToLower(string(stripPort([]byte(host))))
	return p.cache.PurgeKeys(func(key string) bool {
		k, h := keyPathOf(key)
		return (host == "" || string(stripPort([]byte(h))) == host) && strings.HasPrefix(k, prefix)
	}, soft)
}

// pathKey is the "/path?query" part of a cache key for a URL given
// without a host, normalised with the default site's rules.
func (p *Proxy) pathKey(path, query string) string {
	var params [][]byte
	return string(appendQuery(appendPath(nil, []byte(path)), &params, []byte(query), p.gen.Load().router.def.drop))
}

// splitURL takes "http://host/path?q" or "/path?q" (with the host given
// apart) into host, path and query.
func splitURL(host, raw string) (string, string, string) {
	if rest, ok := strings.CutPrefix(raw, "http://"); ok {
		raw = rest
	} else if rest, ok := strings.CutPrefix(raw, "https://"); ok {
		raw = rest
	} else {
		path, query, _ := strings.Cut(raw, "?")
		return host, path, query
	}
	h, pq, found := strings.Cut(raw, "/")
	if !found {
		return h, "/", ""
	}
	path, query, _ := strings.Cut("/"+pq, "?")
	return h, path, query
}

// keyPathOf splits a primary key "scheme://host/path?q" into its
// "/path?q" and its host.
func keyPathOf(key string) (pathQuery, host string) {
	_, rest, _ := strings.Cut(key, "://")
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "/", rest
	}
	return rest[i:], rest[:i]
}

var _ purge.Invalidator = (*Proxy)(nil)
