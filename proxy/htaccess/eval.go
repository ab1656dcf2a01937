package htaccess

import (
	"bytes"
	"time"
)

// maxRounds bounds internal redirects, as Apache's LimitInternalRecursion
// (10): a rule set that keeps rewriting answers 500.
const maxRounds = 10

// Eval decides what the tree's files do with req, into o. It runs the
// phases Apache runs for a request and for each internal redirect a
// rewrite causes: the directory walk (which files apply, REQUEST_FILENAME),
// SetEnvIf, access control, the rewrite rules, Redirect.
func (t *Tree) Eval(req *Request, o *Outcome) {
	o.reset()
	o.proxy, o.docRoot, o.https = t.cfg.ProxyOnly, t.root, req.HTTPS
	now := t.cfg.Now()
	path, query := req.Path, req.Query
	end := false
	for {
		o.rounds++
		if o.rounds > maxRounds+1 {
			o.Status, o.Cause = 500, "request exceeded the limit of 10 internal redirects due to probable configuration error"
			return
		}
		o.Mime = "" // a T= of an earlier round: the new request's type is its own
		last := t.walk(o, path, now)
		if t.failed(o) {
			return
		}
		t.selectSections(o)
		if o.rounds == 1 {
			o.cacheDirectives(path)
		}
		o.setEnvIf(req, path)
		if !t.checkAccess(o, req) {
			return
		}
		var changed bool
		var newPath, newQuery []byte
		if !end {
			newPath, newQuery, changed, end = t.rewrite(o, req, last, path, query, now)
			if o.Status != 0 {
				return
			}
			if changed && o.noSlash {
				// A directory asked for without its slash: mod_dir
				// redirects it first, with the query the rules left.
				query, changed = newQuery, false
			}
		}
		if o.rounds == 1 {
			o.cacheDefaults()
		}
		if o.redirectAlias(req, path, query) {
			return
		}
		o.setEnvs()
		if !changed || len(o.Proxy) > 0 {
			break
		}
		if req.OneRound {
			path, query, o.Rewritten = newPath, newQuery, true
			break
		}
		// An internal redirect: the new path goes through every phase
		// again, its environment's earlier names prefixed REDIRECT_.
		for i := range o.env {
			o.env[i].redirect = true
		}
		path, query = newPath, newQuery
		o.Rewritten = true
	}
	o.Path, o.Query = path, query
}

// walk maps path onto the directories from the root down to the deepest
// that exists (their files in o.files), as Apache's directory walk does:
// REQUEST_FILENAME is the root joined with the path up to the first
// segment that is not a directory, PATH_INFO the rest. It returns the
// state of the deepest directory.
func (t *Tree) walk(o *Outcome, path []byte, now time.Time) *dirState {
	o.files = o.files[:0]
	o.dirURL = append(o.dirURL[:0], '/')
	d := t.dir(o.dirURL, now)
	o.files = append(o.files, d.file)
	o.filename = append(append(o.filename[:0], t.root...), path...)
	o.pathInfo, o.base, o.noSlash = o.pathInfo[:0], o.base[:0], false
	pos := 1
	for pos < len(path) {
		end := bytes.IndexByte(path[pos:], '/')
		if end < 0 {
			end = len(path)
		} else {
			end += pos
		}
		o.tmp = append(append(o.tmp[:0], t.root...), path[:end]...)
		st := t.stats.get(o.tmp, now)
		if st.kind != statDir {
			o.filename = append(append(o.filename[:0], t.root...), path[:end]...)
			o.pathInfo = append(o.pathInfo, path[end:]...)
			o.base = append(o.base, path[pos:end]...)
			return d
		}
		o.dirURL = append(append(o.dirURL[:0], path[:end]...), '/')
		d = t.dir(o.dirURL, now)
		o.files = append(o.files, d.file)
		if end == len(path) {
			o.base = append(o.base, path[pos:end]...) // a directory asked for without its slash
			o.noSlash = true
			return d
		}
		pos = end + 1
	}
	return d
}

// failed answers a request under a file that did not parse (500) or
// cannot be read (403), as Apache does.
func (t *Tree) failed(o *Outcome) bool {
	for _, f := range o.files {
		if f == nil || len(f.Errs) == 0 {
			continue
		}
		o.Status, o.Err, o.Cause = 500, f.Errs[0], f.Errs[0].Error()
		if f.failRead {
			o.Status = 403
		}
		return true
	}
	return false
}

// selectSections lists the scopes that apply, in merge order: each
// file's top level from the root down, then the <Files> sections that
// match the final segment, in order.
func (t *Tree) selectSections(o *Outcome) {
	o.secs = o.secs[:0]
	for _, f := range o.files {
		if f != nil {
			o.secs = append(o.secs, &f.top)
		}
	}
	for _, f := range o.files {
		if f == nil {
			continue
		}
		for _, s := range f.files {
			if s.match.matches(o.base) {
				o.secs = append(o.secs, s)
			}
		}
	}
}

// cacheDirectives reads the LiteSpeed cache directives of the scopes of
// the requested URL (not of what it is rewritten to: the cache keys the
// URL asked for): CacheLookup, CacheKeyModify, CacheIgnoreCacheControl
// and the CacheEnable / CacheDisable that cover path, deeper and later
// ones overriding.
func (o *Outcome) cacheDirectives(path []byte) {
	o.cachePub, o.cachePriv, o.cacheTTL, o.ruleVis = 0, 0, 0, false
	for _, s := range o.secs {
		c := s.cache
		if c == nil {
			continue
		}
		o.Cache.Set = true
		if c.lookupSet {
			o.Cache.NoCache = !c.lookup
		}
		if c.ignoreCCSet {
			o.Cache.IgnoreCacheControl = c.ignoreCC
		}
		o.Cache.DropQuery = append(o.Cache.DropQuery, c.dropQS...)
		for i := range c.toggles {
			o.toggle(&c.toggles[i], path)
		}
	}
}

func (o *Outcome) toggle(t *cacheToggle, path []byte) {
	if !t.covers(path) {
		return
	}
	v := int8(-1)
	if t.on {
		v, o.cacheTTL = 1, t.ttl
	}
	if t.private {
		o.cachePriv = v
	} else {
		o.cachePub = v
	}
}

// cacheDefaults applies CacheEnable / CacheDisable where the rules did
// not decide: as in LiteSpeed, a rule's E=Cache-Control (max-age,
// no-cache) overrides them, so "CacheDisable public /" with rules that
// turn caching on for some URLs caches exactly those. With both caches
// on, a page goes to the private one, as LiteSpeed stores it.
func (o *Outcome) cacheDefaults() {
	c := &o.Cache
	switch {
	case c.NoCache || c.TTL > 0:
	case o.cachePub > 0 || o.cachePriv > 0:
		c.Set, c.Enabled, c.TTL = true, true, o.cacheTTL
		if c.TTL == 0 {
			c.TTL = defaultCacheTTL
		}
		if !o.ruleVis {
			c.Private = o.cachePriv > 0
		}
	case o.cachePub < 0 || o.cachePriv < 0:
		c.Set, c.Disabled = true, true
	}
}

// setEnvIf runs SetEnvIf/BrowserMatch, before access control as Apache
// does (so "Allow from env=" sees them).
func (o *Outcome) setEnvIf(req *Request, path []byte) {
	for _, s := range o.secs {
		for _, e := range s.setEnvIf {
			v := o.attribute(req, e.attr, path)
			idx := e.re.FindSubmatchIndex(v)
			if idx == nil {
				continue
			}
			for i := range e.sets {
				a := &e.sets[i]
				if a.unset {
					o.setEnv(a.name, nil, true)
					continue
				}
				o.scratch = expandRegexTarget(o.scratch[:0], &a.value, v, idx)
				o.setEnv(a.name, o.scratch, false)
			}
		}
	}
}

// attribute is what SetEnvIf tests.
func (o *Outcome) attribute(req *Request, attr string, path []byte) []byte {
	switch {
	case equalFold(attr, "Remote_Addr"), equalFold(attr, "Remote_Host"):
		o.tmp = req.Client.AppendTo(o.tmp[:0])
		return o.tmp
	case equalFold(attr, "Request_Method"):
		return req.Method
	case equalFold(attr, "Request_URI"):
		return path
	case equalFold(attr, "Request_Protocol"):
		return req.Protocol
	}
	if v := req.Header.Peek(attr); len(v) > 0 {
		return v
	}
	v, _ := o.lookupEnv(attr)
	return v
}

// setEnvs runs SetEnv and UnsetEnv (mod_env's fixup: after access
// control, so "Allow from env=" does not see them).
func (o *Outcome) setEnvs() {
	for _, s := range o.secs {
		for i := range s.setEnv {
			a := &s.setEnv[i]
			lit, _ := a.value.literal()
			o.setEnv(a.name, append(o.scratch[:0], lit...), a.unset)
		}
	}
}

// redirectAlias applies mod_alias's Redirect and RedirectMatch of the
// scopes, the deepest directory's first (as Apache merges them).
func (o *Outcome) redirectAlias(req *Request, path, query []byte) bool {
	for i := len(o.secs) - 1; i >= 0; i-- {
		for _, r := range o.secs[i].redirects {
			if o.tryRedirect(req, r, path, query) {
				return true
			}
		}
	}
	return false
}

func (o *Outcome) tryRedirect(req *Request, r *redirect, path, query []byte) bool {
	o.loc = o.loc[:0]
	if r.re != nil {
		idx := r.re.FindSubmatchIndex(path)
		if idx == nil {
			return false
		}
		o.loc = expandRegexTarget(o.loc, &r.target, path, idx)
	} else {
		rest, ok := prefixMatch(path, r.prefix)
		if !ok {
			return false
		}
		if r.url != "" {
			o.loc = append(append(o.loc, r.url...), rest...)
		}
	}
	o.Status = r.status
	if r.status < 300 || r.status >= 400 {
		o.Cause = "Redirect " + r.prefix
		return true
	}
	if len(query) > 0 && bytes.IndexByte(o.loc, '?') < 0 {
		o.loc = append(append(o.loc, '?'), query...)
	}
	o.Location = o.Location[:0]
	if len(o.loc) > 0 && o.loc[0] == '/' {
		// A path: on this host, as Apache makes it absolute.
		o.Location = appendOrigin(o.Location, req)
	}
	o.Location = append(o.Location, o.loc...)
	return true
}

// prefixMatch reports whether path starts with the URL path prefix on a
// segment boundary, and what follows it.
func prefixMatch(path []byte, prefix string) ([]byte, bool) {
	if len(path) < len(prefix) || string(path[:len(prefix)]) != prefix {
		return nil, false
	}
	rest := path[len(prefix):]
	if len(rest) > 0 && rest[0] != '/' && prefix[len(prefix)-1] != '/' {
		return nil, false
	}
	return rest, true
}

// expandRegexTarget appends t with $N taken from src's match idx.
func expandRegexTarget(dst []byte, t *template, src []byte, idx []int) []byte {
	for _, p := range t.parts {
		switch p.kind {
		case partLit:
			dst = append(dst, p.lit...)
		case partRuleRef:
			if 2*p.n+1 < len(idx) && idx[2*p.n] >= 0 {
				dst = append(dst, src[idx[2*p.n]:idx[2*p.n+1]]...)
			}
		}
	}
	return dst
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
