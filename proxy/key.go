package proxy

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/percent"
)

// keyPart is the request's primary cache key (stageKey).
type keyPart struct {
	key []byte
	// pathAt is where the key's target starts: key[pathAt:] is the
	// normalised path and query a fill sends upstream (keyTarget).
	pathAt int
	params [][]byte // scratch for sorting the query's parameters
	h      uint64   // hash of key in the shared cache
}

func newKeyPart() keyPart {
	return keyPart{key: make([]byte, 0, 256), params: make([][]byte, 0, 16)}
}

func (k *keyPart) reset() {
	clear(k.params)
	k.key = k.key[:0] // a buffer cut writes its length only
	k.params = k.params[:0]
	k.pathAt, k.h = 0, 0
}

// stageKey computes the request's primary cache key and its hash.
func stageKey(r *request) verdict {
	t := target{scheme: schemeOf(r.tls), host: r.header().Host()}
	t.path, t.query = splitTarget(r.req)
	drop := keyDrop{site: r.s.drop}
	if lc := r.lsCache(); lc != nil {
		drop.rules = lc.DropQuery
	}
	r.setKey(&t, drop)
	r.h = r.s.cache.Hash(r.key)
	return proceed
}

// setKey makes t, less what drop leaves out, the request's key.
func (r *request) setKey(t *target, drop keyDrop) {
	r.key = appendKey(r.key[:0], &r.params, t, drop)
	r.pathAt = len(t.scheme) + len("://") + len(t.host)
}

// keyTarget is the origin-form target the request's key describes: its
// path with unreserved characters decoded, its query without the dropped
// parameters, the rest in the key's order. A fill sends exactly this, so
// that what is stored under the key is the answer to the key's URL: a
// page that reflects a tracking parameter cannot hand one visitor's value
// to everyone, and an origin that routes on the raw path cannot have the
// canonical URL's entry filled with another resource's answer.
func (r *request) keyTarget() []byte { return r.key[r.pathAt:] }

// pathOf is the request path as the client sent it (not decoded).
func pathOf(req *fasthttp.Request) []byte {
	uri := req.Header.RequestURI()
	if i := indexAny(uri, '?', '#'); i >= 0 {
		uri = uri[:i]
	}
	if len(uri) > 0 && uri[0] != '/' { // absolute form: http://host/path
		return req.URI().PathOriginal()
	}
	return uri
}

// splitTarget is the request's path and query string as sent (not
// decoded). A plain origin-form target ("/path?query") is split in one
// pass; anything else (absolute form, control bytes) is left to the URI
// parser, so both always agree (FuzzSplitTargetMatchesURIParser).
func splitTarget(req *fasthttp.Request) (path, query []byte) {
	uri := req.Header.RequestURI()
	if len(uri) == 0 || uri[0] != '/' {
		return pathOf(req), req.URI().QueryString()
	}
	q, end := -1, len(uri)
	for i, c := range uri {
		switch {
		case c <= ' ' || c == 0x7f:
			return pathOf(req), req.URI().QueryString()
		case c == '?' && q < 0 && end == len(uri):
			q = i
		case c == '#' && end == len(uri):
			end = i
		}
	}
	switch {
	case q < 0:
		return uri[:end], nil
	default:
		return uri[:q], uri[q+1 : end]
	}
}

// splitURL takes "http://host/path?q" or "/path?q" (with the host given
// apart) into host (normalHost: as requests' are keyed), path and query.
func splitURL(host, raw string) (string, string, string) {
	h, path, query := splitRawURL(host, raw)
	if h != "" {
		h = normalHost(h)
	}
	return h, path, query
}

func splitRawURL(host, raw string) (string, string, string) {
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

func indexAny(b []byte, c1, c2 byte) int {
	for i, c := range b {
		if c == c1 || c == c2 {
			return i
		}
	}
	return -1
}

// target is what a request asks for, as its cache key is made of it.
type target struct{ scheme, host, path, query []byte }

// appendKey appends the primary cache key of a request: scheme, lower-case
// host, normalised path and normalised query (tracking parameters dropped,
// the rest sorted). params is scratch space for the sort.
func appendKey(dst []byte, params *[][]byte, t *target, drop keyDrop) []byte {
	dst = append(dst, t.scheme...)
	dst = append(dst, "://"...)
	for _, c := range t.host {
		dst = append(dst, lower(c))
	}
	dst = appendPath(dst, t.path)
	return appendQuery(dst, params, t.query, drop)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// appendPath normalises percent-encoding (RFC 3986 6.2.2): hex digits
// upper case, unreserved characters decoded, so equivalent URLs share one
// entry. Reserved characters stay encoded: /a%2Fb is not /a/b.
func appendPath(dst, path []byte) []byte {
	if len(path) == 0 {
		return append(dst, '/')
	}
	for i := 0; i < len(path); i++ {
		v, ok := percent.At(path, i)
		if !ok {
			dst = append(dst, path[i])
			continue
		}
		if isUnreserved(v) {
			dst = append(dst, v)
		} else {
			dst = append(dst, '%', upperHex(path[i+1]), upperHex(path[i+2]))
		}
		i += 2
	}
	return dst
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// appendQuery appends "?" and the kept parameters in sorted order, or
// nothing when none is kept.
func appendQuery(dst []byte, scratch *[][]byte, query []byte, drop keyDrop) []byte {
	params := (*scratch)[:0]
	for len(query) > 0 {
		var p []byte
		p, query = cutItem(query, '&')
		if len(p) == 0 || drop.match(paramName(p)) {
			continue
		}
		params = insertSorted(params, p)
	}
	*scratch = params
	for i, p := range params {
		if i == 0 {
			dst = append(dst, '?')
		} else {
			dst = append(dst, '&')
		}
		dst = append(dst, p...)
	}
	return dst
}

func paramName(p []byte) []byte {
	if i := bytes.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}

// insertSorted keeps params ordered (stable for equal parameters, so
// ?a=2&a=1 and ?a=1&a=2 stay different, as they may mean different things).
func insertSorted(params [][]byte, p []byte) [][]byte {
	params = append(params, p)
	i := len(params) - 1
	for i > 0 && bytes.Compare(paramName(params[i-1]), paramName(p)) > 0 {
		params[i] = params[i-1]
		i--
	}
	params[i] = p
	return params
}

// keyDrop is what query parameters a key leaves out: the site's, and
// the request's LiteSpeed CacheKeyModify -qs: rules.
type keyDrop struct {
	site  *patterns
	rules []string // names, a trailing "*" by prefix
}

func (d keyDrop) match(name []byte) bool {
	if d.site.match(name) {
		return true
	}
	for _, r := range d.rules {
		if pre, ok := strings.CutSuffix(r, "*"); ok {
			if bytes.HasPrefix(name, []byte(pre)) {
				return true
			}
		} else if string(name) == r {
			return true
		}
	}
	return false
}

// patterns matches names exactly or, for entries ending in "*", by prefix.
type patterns struct {
	exact    map[string]struct{}
	prefixes []string
}

func newPatterns(list []string) *patterns {
	p := &patterns{exact: make(map[string]struct{})}
	for _, s := range list {
		if pre, ok := strings.CutSuffix(s, "*"); ok {
			p.prefixes = append(p.prefixes, pre)
		} else {
			p.exact[s] = struct{}{}
		}
	}
	return p
}

func (p *patterns) match(name []byte) bool {
	if p == nil {
		return false
	}
	if _, ok := p.exact[string(name)]; ok {
		return true
	}
	for _, pre := range p.prefixes {
		if bytes.HasPrefix(name, []byte(pre)) {
			return true
		}
	}
	return false
}

// requestScheme is the scheme the client used.
func requestScheme(ctx *fasthttp.RequestCtx) []byte { return schemeOf(ctx.IsTLS()) }

func schemeOf(tls bool) []byte {
	if tls {
		return schemeHTTPS
	}
	return schemeHTTP
}

var (
	schemeHTTP  = []byte("http")
	schemeHTTPS = []byte("https")
)

// cutItem splits the first item off a sep-separated list.
func cutItem(list []byte, sep byte) (item, rest []byte) {
	if i := bytes.IndexByte(list, sep); i >= 0 {
		return list[:i], list[i+1:]
	}
	return list, nil
}
