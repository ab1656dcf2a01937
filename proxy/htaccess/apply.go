package htaccess

import (
	"bytes"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/percent"
)

// rewriteEff is the rewrite configuration merged from the root down to a
// directory: engine and options field by field, the rules of the deepest
// scope that has any (with its parents' after or before them under
// RewriteOptions inherit), run in that scope's directory.
type rewriteEff struct {
	engine bool
	base   string // RewriteBase of the deepest scope; "" = its directory
	dir    string // URL path of that directory ("/a/")
	rules  []*rule
}

// effective returns the merged rewrite configuration of the walk's
// chain, cached in the deepest directory's state while its files stay
// the same.
func (t *Tree) effective(o *Outcome, last *dirState) *rewriteEff {
	t.mu.RLock()
	eff, from := last.eff, last.effFrom
	t.mu.RUnlock()
	if from != nil && samePointers(from, o.files) {
		return eff
	}
	eff = mergeRewrite(o.files)
	t.mu.Lock()
	last.eff, last.effFrom = eff, append([]*File(nil), o.files...)
	t.mu.Unlock()
	return eff
}

func samePointers(a, b []*File) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mergeRewrite(files []*File) *rewriteEff {
	var eff *rewriteEff
	for _, f := range files {
		if f == nil || f.top.rewrite == nil {
			continue
		}
		c := f.top.rewrite
		next := &rewriteEff{engine: c.engine, base: c.base, dir: f.urlDir, rules: c.rules}
		if eff != nil {
			if !c.engineSet {
				next.engine = eff.engine
			}
			switch c.inherit {
			case inheritAfter:
				next.rules = append(append([]*rule(nil), c.rules...), eff.rules...)
			case inheritBefore:
				next.rules = append(append([]*rule(nil), eff.rules...), c.rules...)
			}
		}
		eff = next
	}
	return eff
}

// maxNext bounds the restarts [N] may cause in one round (Apache's
// default is 32000; a rule set that needs more is broken), and
// maxRewritten the length a rewritten path and query may grow to.
const (
	maxNext      = 1000
	maxRewritten = 8 << 10
)

// rewrite runs the per-directory rules on path. It returns the path and
// query to redirect to internally (changed), whether [END] stopped
// further rounds; terminal answers (F, G, R) are left in o.Status.
func (t *Tree) rewrite(o *Outcome, req *Request, last *dirState, path, query []byte, now time.Time) (newPath, newQuery []byte, changed, end bool) {
	eff := t.effective(o, last)
	if eff == nil || !eff.engine || len(eff.rules) == 0 {
		return nil, nil, false, false
	}
	buf := o.rounds & 1
	cur := append(o.pathBuf[buf][:0], path...)
	q := append(o.queryBuf[buf][:0], query...)
	defer func() { o.pathBuf[buf], o.queryBuf[buf] = cur, q }()
	o.subject = perDirSubject(o.subject[:0], cur, eff.dir, t.root)
	o.uri, o.args = path, q
	nexts := 0
	for i := 0; i < len(eff.rules); i++ {
		r := eff.rules[i]
		if o.proxy && !r.litespeed {
			continue
		}
		match, stop := o.applies(t, r, req, now)
		if stop {
			return
		}
		if !match {
			if r.flags.chain {
				for i < len(eff.rules)-1 && eff.rules[i].flags.chain {
					i++
				}
			}
			continue
		}
		o.ruleEnv(req, r)
		switch {
		case r.flags.forbidden:
			o.Status, o.Cause = 403, r.at+": RewriteRule [F]"
			return
		case r.flags.gone:
			o.Status, o.Cause = 410, r.at+": RewriteRule [G]"
			return
		}
		if c := r.flags.redirect; c != 0 && (c < 300 || c >= 400) {
			// R=4xx/5xx: the status alone, the substitution dropped.
			o.Status, o.Cause = c, r.at+": RewriteRule [R]"
			return
		}
		if r.flags.mime != "" {
			o.Mime = r.flags.mime
		}
		if !r.dash && !o.proxy {
			if r.flags.proxy {
				o.proxyTo(req, r, eff, q)
				return cur, q, false, true
			}
			cur, q = o.substitute(req, r, eff, cur, q)
			if o.Status != 0 {
				return
			}
			if len(cur)+len(q) > maxRewritten {
				o.Status, o.Cause = 500, r.at+": rewritten URL longer than 8 KiB"
				return
			}
			changed = true
			o.args = q
			o.subject = perDirSubject(o.subject[:0], cur, eff.dir, t.root)
			o.filename = append(append(o.filename[:0], t.root...), cur...)
		}
		if r.flags.next && nexts < maxNext {
			nexts++
			i = -1
			continue
		}
		if r.flags.end {
			end = true
			break
		}
		if r.flags.last {
			break
		}
		i += r.flags.skip
	}
	if changed && bytes.Equal(cur, path) && bytes.Equal(q, query) {
		// Rewritten to itself: Apache ignores it rather than loop.
		changed = false
	}
	return cur, q, changed, end
}

// perDirSubject is what a per-directory rule matches: the path with the
// directory's prefix removed (or, as Apache, the whole file name when
// the path does not start with it).
func perDirSubject(dst, path []byte, dir, root string) []byte {
	if len(path) >= len(dir) && string(path[:len(dir)]) == dir {
		return append(dst, path[len(dir):]...)
	}
	return append(append(dst, root...), path...)
}

// applies reports whether r applies to the request. A rule that reads
// a variable ramjet does not know fails closed where its pattern
// matches: it is not applied, the request bypasses the cache, and a
// rule that would refuse ([F], [G], R=4xx) refuses (stop), as access
// rules ramjet cannot evaluate do.
func (o *Outcome) applies(t *Tree, r *rule, req *Request, now time.Time) (match, stop bool) {
	if r.unknown == "" {
		return o.ruleMatches(t, r, req, now), false
	}
	if !o.patternMatches(r) {
		return false, false
	}
	o.Cache.Set, o.Cache.NoCache = true, true
	if o.Cache.Undecided == "" {
		o.Cache.Undecided = r.undecided
	}
	f := &r.flags
	switch {
	case f.forbidden, f.redirect >= 400:
		o.Status, o.Cause = 403, r.undecided
	case f.gone:
		o.Status, o.Cause = 410, r.undecided
	default:
		return false, false
	}
	return false, true
}

// ruleMatches matches the rule's pattern, then its conditions.
func (o *Outcome) ruleMatches(t *Tree, r *rule, req *Request, now time.Time) bool {
	if !o.patternMatches(r) {
		return false
	}
	o.condCaps = o.condCaps[:0]
	conds := r.conds
	for i := 0; i < len(conds); i++ {
		c := conds[i]
		ok := o.condMatches(t, c, req, r.condCaps, now)
		if c.or {
			if !ok {
				continue
			}
			for i < len(conds)-1 && conds[i].or {
				i++
			}
			continue
		}
		if !ok {
			return false
		}
	}
	return true
}

// patternMatches matches the rule's pattern against the subject,
// keeping its captures when the rule uses them.
func (o *Outcome) patternMatches(r *rule) bool {
	if r.caps {
		idx := r.re.FindSubmatchIndex(o.subject)
		if idx == nil {
			return false
		}
		o.caps = append(o.caps[:0], idx...)
	} else {
		o.caps = o.caps[:0]
		if r.m.match(o.subject) == r.negate {
			return false
		}
	}
	return true
}

func (o *Outcome) condMatches(t *Tree, c *cond, req *Request, keep bool, now time.Time) bool {
	o.tmp = o.expand(o.tmp[:0], &c.test, req)
	var ok bool
	switch c.kind {
	case condRegex:
		if keep && !c.negate {
			idx := c.re.FindSubmatchIndex(o.tmp)
			if ok = idx != nil; ok {
				o.condSrc = append(o.condSrc[:0], o.tmp...)
				o.condCaps = append(o.condCaps[:0], idx...)
			}
		} else {
			ok = c.m.match(o.tmp)
		}
	case condDir, condFile, condSize, condLink, condExists, condExec:
		st := t.stats.get(o.tmp, now)
		switch c.kind {
		case condDir:
			ok = st.kind == statDir
		case condFile:
			ok = st.kind == statFile
		case condSize:
			ok = st.kind == statFile && st.size > 0
		case condLink:
			ok = st.link
		case condExists:
			ok = st.kind != statNone
		case condExec:
			ok = st.kind == statFile && st.exec
		}
	case condStrLT, condStrGT, condStrEQ, condStrLE, condStrGE:
		o.scratch = o.expand(o.scratch[:0], &c.operand, req)
		cmp := compare(o.tmp, o.scratch, c.nc)
		switch c.kind {
		case condStrLT:
			ok = cmp < 0
		case condStrGT:
			ok = cmp > 0
		case condStrEQ:
			ok = cmp == 0
		case condStrLE:
			ok = cmp <= 0
		case condStrGE:
			ok = cmp >= 0
		}
	default:
		o.scratch = o.expand(o.scratch[:0], &c.operand, req)
		a, b := atoi(o.tmp), atoi(o.scratch)
		switch c.kind {
		case condIntEQ:
			ok = a == b
		case condIntNE:
			ok = a != b
		case condIntLT:
			ok = a < b
		case condIntLE:
			ok = a <= b
		case condIntGT:
			ok = a > b
		case condIntGE:
			ok = a >= b
		}
	}
	return ok != c.negate
}

func compare(a, b []byte, nocase bool) int {
	if !nocase {
		return bytes.Compare(a, b)
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := lower(a[i]), lower(b[i]); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}

// atoi reads a decimal integer as Apache's atoi does: leading space and
// sign, digits up to the first other character, 0 for none.
func atoi(b []byte) int64 {
	b = bytes.TrimLeft(b, " \t")
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > 1<<58 {
			break
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// ruleEnv applies the E= and CO= flags of a matched rule. E= names that
// LiteSpeed reads itself (Cache-Control, Cache-Vary, noabort) drive the
// cache and do not reach the application.
func (o *Outcome) ruleEnv(req *Request, r *rule) {
	for i := range r.env {
		a := &r.env[i]
		if a.unset {
			o.setEnv(a.name, nil, true)
			continue
		}
		o.scratch = o.expand(o.scratch[:0], &a.value, req)
		switch {
		case equalFold(a.name, "Cache-Control"):
			o.cacheControl(o.scratch)
		case equalFold(a.name, "Cache-Vary"):
			o.Cache.Set = true
			o.Cache.VaryCookies = appendNames(o.Cache.VaryCookies, o.scratch)
		case equalFold(a.name, "noabort"), equalFold(a.name, "nokeepalive"):
		default:
			if !o.proxy {
				o.setEnv(a.name, o.scratch, false)
			}
		}
	}
	if o.proxy {
		return
	}
	for i := range r.cookies {
		o.cookies = append(o.cookies, o.cookie(req, &r.cookies[i]))
	}
}

// cacheControl reads E=Cache-Control:… as LiteSpeed does: a comma list
// of no-cache, private, public, max-age=N, vary=NAME (no-autoflush,
// esi=… and the rest change nothing here).
func (o *Outcome) cacheControl(v []byte) {
	o.Cache.Set = true
	for len(v) > 0 {
		var item []byte
		item, v, _ = bytes.Cut(v, []byte{','})
		item = bytes.TrimSpace(item)
		k, val, _ := bytes.Cut(item, []byte{'='})
		switch {
		case bytesFold(k, "no-cache"), bytesFold(k, "no-store"):
			o.Cache.NoCache = true
		case bytesFold(k, "private"):
			o.Cache.Private, o.ruleVis = true, true
		case bytesFold(k, "public"):
			o.Cache.Private, o.ruleVis = false, true
		case bytesFold(k, "max-age"), bytesFold(k, "s-maxage"):
			if n := atoi(val); n >= 0 {
				o.Cache.TTL = n
			}
		case bytesFold(k, "vary"):
			o.Cache.Vary = normalizeVary(o.Cache.Vary[:0], val)
		}
	}
}

// normalizeVary writes a "+"-joined vary value without empty or
// repeated names: "+ismobile" (the plugin's rule with no value before
// it) is "ismobile".
func normalizeVary(dst, v []byte) []byte {
	for len(v) > 0 {
		var name []byte
		name, v, _ = bytes.Cut(v, []byte{'+'})
		if len(name) == 0 || containsItem(dst, name) {
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, '+')
		}
		dst = append(dst, name...)
	}
	return dst
}

func containsItem(list, name []byte) bool {
	for len(list) > 0 {
		var it []byte
		it, list, _ = bytes.Cut(list, []byte{'+'})
		if bytes.Equal(it, name) {
			return true
		}
	}
	return false
}

// appendNames adds the comma-separated names of v to list, each once.
func appendNames(list, v []byte) []byte {
	for len(v) > 0 {
		var name []byte
		name, v, _ = bytes.Cut(v, []byte{','})
		name = bytes.TrimSpace(name)
		if len(name) == 0 || hasName(list, name) {
			continue
		}
		if len(list) > 0 {
			list = append(list, ',')
		}
		list = append(list, name...)
	}
	return list
}

func hasName(list, name []byte) bool {
	for len(list) > 0 {
		var it []byte
		it, list, _ = bytes.Cut(list, []byte{','})
		if bytes.Equal(it, name) {
			return true
		}
	}
	return false
}

// cookie formats a CO= flag's Set-Cookie value.
func (o *Outcome) cookie(req *Request, c *cookieFlag) []byte {
	b := o.expand(nil, &c.name, req)
	b = append(b, '=')
	b = o.expand(b, &c.value, req)
	if c.domain != "" {
		b = append(append(b, "; domain="...), c.domain...)
	}
	if c.lifetime > 0 {
		b = append(b, "; expires="...)
		b = time.Now().Add(time.Duration(c.lifetime)*time.Minute).UTC().AppendFormat(b, "Mon, 02-Jan-2006 15:04:05 GMT")
	}
	path := c.path
	if path == "" {
		path = "/"
	}
	b = append(append(b, "; path="...), path...)
	if c.secure {
		b = append(b, "; secure"...)
	}
	if c.httpOnly {
		b = append(b, "; HttpOnly"...)
	}
	return b
}

// substitute expands a matched rule's substitution into the new path
// and query, or sets a redirect.
func (o *Outcome) substitute(req *Request, r *rule, eff *rewriteEff, cur, q []byte) ([]byte, []byte) {
	o.scratch = o.expandSubst(o.scratch[:0], &r.subst, req, r.flags.b)
	s := o.scratch
	var newQ []byte
	hasQ := false
	qi := bytes.IndexByte(s, '?')
	if r.flags.qsl {
		qi = bytes.LastIndexByte(s, '?')
	}
	if qi >= 0 {
		s, newQ, hasQ = s[:qi], s[qi+1:], true
	}
	absolute := isAbsoluteURL(s)
	if !absolute && (len(s) == 0 || s[0] != '/') {
		base := eff.base
		if base == "" {
			base = eff.dir
		}
		o.tmp = append(append(o.tmp[:0], base...), s...)
		if len(base) > 0 && base[len(base)-1] != '/' && len(s) > 0 {
			o.tmp = append(append(o.tmp[:0], base...), '/')
			o.tmp = append(o.tmp, s...)
		}
		s = o.tmp
	}
	// The new query: the substitution's, with the old one after it
	// under QSA, or the old one if the substitution has none (unless QSD).
	o.loc = o.loc[:0]
	switch {
	case hasQ && r.flags.qsa && len(q) > 0:
		o.loc = append(o.loc, newQ...)
		if len(newQ) > 0 {
			o.loc = append(o.loc, '&')
		}
		o.loc = append(o.loc, q...)
	case hasQ:
		o.loc = append(o.loc, newQ...)
	case r.flags.qsd:
	default:
		o.loc = append(o.loc, q...)
	}
	if r.flags.redirect != 0 || absolute {
		o.redirectTo(req, r, s, o.loc)
		return cur, q
	}
	cur = cleanPath(append(cur[:0], percent.Decode(s)...))
	q = append(q[:0], o.loc...)
	return cur, q
}

// cleanPath removes "." and ".." segments in place, as Apache's
// ap_getparents does to the URL of an internal redirect: a rewritten
// path never climbs above the root. A trailing slash stays.
func cleanPath(p []byte) []byte {
	if len(p) == 0 || p[0] != '/' {
		p = append([]byte{'/'}, p...)
	}
	out := p[:1]
	for i := 1; i <= len(p); {
		j := i
		for j < len(p) && p[j] != '/' {
			j++
		}
		seg := p[i:j]
		switch {
		case len(seg) == 0 && j < len(p): // "//": one slash
		case string(seg) == ".":
		case string(seg) == "..":
			if k := bytes.LastIndexByte(out[:len(out)-1], '/'); k >= 0 {
				out = out[:k+1]
			}
		default:
			out = append(out, seg...)
			if j < len(p) {
				out = append(out, '/')
			}
		}
		i = j + 1
	}
	return out
}

func isAbsoluteURL(s []byte) bool {
	i := bytes.Index(s, []byte("://"))
	if i <= 0 {
		return false
	}
	for _, c := range s[:i] {
		if !isAlnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// redirectTo answers a rule's redirect: an absolute Location on this
// host unless the substitution was a URL, its path escaped unless NE.
func (o *Outcome) redirectTo(req *Request, r *rule, s, query []byte) {
	code := r.flags.redirect
	if code == 0 {
		code = 302
	}
	o.Status, o.Cause = code, r.at+": RewriteRule [R]"
	if code < 300 || code >= 400 {
		return // R=4xx/5xx: the status alone, as Apache
	}
	loc := o.Location[:0]
	if !isAbsoluteURL(s) {
		loc = appendOrigin(loc, req)
	}
	if r.flags.ne {
		loc = append(loc, s...)
	} else {
		loc = percent.AppendEscapedPath(loc, s)
	}
	if len(query) > 0 {
		loc = append(append(loc, '?'), query...)
	}
	o.Location = loc
}

// appendOrigin appends the scheme and host the client asked.
func appendOrigin(dst []byte, req *Request) []byte {
	if req.HTTPS {
		dst = append(dst, "https://"...)
	} else {
		dst = append(dst, "http://"...)
	}
	return append(dst, req.Host...)
}

// bytesFold compares b with an ASCII string, ignoring case.
func bytesFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// proxyTo records a [P] rule's target: an absolute URL (a path is on
// this host), with the query as the substitution leaves it. [P] ends the
// rules, as Apache's; the docroot forwards only to configured origins.
func (o *Outcome) proxyTo(req *Request, r *rule, eff *rewriteEff, q []byte) {
	o.scratch = o.expandSubst(o.scratch[:0], &r.subst, req, r.flags.b)
	s := o.scratch
	var newQ []byte
	hasQ := false
	if i := bytes.IndexByte(s, '?'); i >= 0 {
		s, newQ, hasQ = s[:i], s[i+1:], true
	}
	p := o.Proxy[:0]
	if !isAbsoluteURL(s) {
		p = appendOrigin(p, req)
		if len(s) == 0 || s[0] != '/' {
			base := eff.base
			if base == "" {
				base = eff.dir
			}
			p = append(p, base...)
		}
	}
	p = append(p, s...)
	switch {
	case hasQ && r.flags.qsa && len(q) > 0:
		p = append(append(append(append(p, '?'), newQ...), '&'), q...)
	case hasQ && len(newQ) > 0:
		p = append(append(p, '?'), newQ...)
	case !hasQ && !r.flags.qsd && len(q) > 0:
		p = append(append(p, '?'), q...)
	}
	o.Proxy, o.Cause = p, r.at+": RewriteRule [P]"
}
