package proxy

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// HeaderVaryValue carries the LiteSpeed cache rules' vary value
// ("ismobile") to the application, as LiteSpeed passes it to a proxied
// origin; a client's own is removed. It is also what the cache varies
// on for a site with .htaccess rules (varySpec).
const HeaderVaryValue = "X-Lscache-Vary-Value"

// varyValueKey is HeaderVaryValue as a vary spec names it.
const varyValueKey = "x-lscache-vary-value"

// csHtaccess is the Cache-Status of a request the site's .htaccess
// refuses or redirects: passed to the docroot, which answers it.
var csHtaccess = []byte("ramjet; fwd=bypass; detail=htaccess")

var errRefused = errors.New("proxy: refused by the site's .htaccess rules")

// stageRewrite applies the site's .htaccess files before the cache is
// consulted: in docroot mode all of them (what they refuse, redirect or
// protect is passed uncached to the docroot, which answers it with the
// site's error documents, so a stored page is never served past a
// password), in proxy mode (htaccess_root) the LiteSpeed cache rules.
// What those rules say drives the cache for this request: bypass
// (E=Cache-Control:no-cache), the named variant (vary=ismobile) that
// keys it and reaches the application, dropped query parameters; the
// fill reads the rest (default TTL, vary cookies).
func stageRewrite(r *request) verdict {
	if !r.rewrite(true, true) || r.s.Docroot != nil {
		return proceed // a docroot answers what they refuse: identity passes it (refusedToDocroot)
	}
	code := r.ht.Status
	r.ctx.SetStatusCode(code)
	r.ctx.SetContentType("text/plain; charset=utf-8")
	r.ctx.SetBodyString(fasthttp.StatusMessage(code) + "\n")
	r.res.written = true
	return answered
}

// refusedToDocroot reports whether the rules refused or redirected the
// request on a docroot site, which answers it (with the site's
// ErrorDocument), uncached.
func (r *request) refusedToDocroot() bool {
	return r.s.Docroot != nil && r.s.ht != nil && r.ht.Status != 0
}

// stageRewriteInline applies the rules as stageRewrite does; a request
// they refuse or redirect is declined.
func stageRewriteInline(r *request) verdict {
	if r.rewrite(true, true) {
		return declined
	}
	return proceed
}

// stageRewriteFragment applies the rules to a fragment, whose header
// fields are its page's unless it has its own (another host's), and
// whose header lines were never read from a client. A fragment they
// refuse fails.
func stageRewriteFragment(r *request) verdict {
	refused := r.rewrite(!r.frag.pageHeader, false)
	r.htHash = 0 // its fill's request is made anew (fragment.upstreamRequest): no docrootKey
	if refused {
		r.res.err = errRefused
		return answered
	}
	return proceed
}

// rewrite applies the site's rules to the request and reports whether
// they refuse or redirect it: a docroot answers it (with the site's
// ErrorDocument), uncached; in proxy mode ramjet answers the LiteSpeed
// block's [F] or [G] itself. own: the request's header is its own, which
// takes the rules' vary value; raw: its raw lines are what it carries
// (htKey).
func (r *request) rewrite(own, raw bool) (refused bool) {
	t := r.s.ht
	h := r.header()
	if t == nil || isPurgeMethod(h.Method()) {
		return false // a purge is ramjet's, not the site's (trust decides it)
	}
	r.htRan = true
	if own {
		delCanonical(h, HeaderVaryValue)
	}
	key := r.htKey(raw)
	r.htHash = key
	if token, ok := t.Recall(key, &r.ht); !ok {
		r.evalHtaccess(t)
		t.Remember(key, token, &r.ht)
	}
	o := &r.ht
	if o.Status != 0 {
		return true
	}
	if len(o.Cache.Vary) > 0 && own {
		h.SetCanonical(hdrVaryValue, o.Cache.Vary)
	}
	return false
}

// rewritePart is what the site's .htaccess rules decided of the request
// (stageRewrite), valid when r.s.ht is set, and their input, reused.
type rewritePart struct {
	ht     htaccess.Outcome
	htReq  htaccess.Request
	htHdr  htHeader
	htLine []byte
	// htHash is htKey's hash of the request (0: not taken), from which
	// the docroot's key for the same rules is made (docrootKey).
	htHash uint64
	// htKeyBuf gathers what htKey hashes, reused.
	htKeyBuf []byte
	// htRan: the rules ran on the request; a part they never touched (no
	// rules, the common case) is fresh already and reset skips it.
	htRan bool
}

func (w *rewritePart) reset() {
	if !w.htRan {
		return
	}
	w.htRan = false
	w.ht.Reset()
	w.htReq, w.htHash = htaccess.Request{}, 0
	w.htHdr = htHeader{cookie: w.htHdr.cookie[:0]}
	w.htLine, w.htKeyBuf = w.htLine[:0], w.htKeyBuf[:0]
}

// hdrVaryValue is HeaderVaryValue as fasthttp stores it.
var hdrVaryValue = []byte(HeaderVaryValue)

// evalHtaccess runs the requested URL's rules (one round: the lookup's).
func (r *request) evalHtaccess(t *htaccess.Tree) {
	h := r.header()
	hr := &r.htReq
	hr.Method, hr.Path, hr.Query = h.Method(), r.req.URI().Path(), r.req.URI().QueryString()
	r.htHdr.h = h
	hr.Host, hr.Protocol, hr.Header = h.Host(), h.Protocol(), &r.htHdr
	hr.Client, hr.ClientPort, hr.HTTPS = r.client, int(r.port), r.tls
	hr.Port = htaccess.HostPort(hr.Host, r.tls)
	// The requested URL's rules decide caching and refusal (as
	// LiteSpeed's CacheLookup); the docroot runs the internal redirect.
	hr.OneRound = true
	r.htLine = append(append(append(r.htLine[:0], hr.Method...), ' '), h.RequestURI()...)
	r.htLine = append(append(r.htLine, ' '), hr.Protocol...)
	hr.RequestLine = r.htLine
	t.Eval(hr, &r.ht)
	r.htReq.Header, r.htHdr.h = nil, nil
}

// lsCache is what the site's LiteSpeed cache rules said of the request;
// nil for a site without .htaccess rules.
func (r *request) lsCache() *htaccess.Cache {
	if r.s.ht == nil {
		return nil
	}
	return &r.ht.Cache
}

// lsRules is the part of the LiteSpeed cache rules a fill needs, out of
// the request (a background refresh outlives it). It is shared by every
// fill whose rules said the same (lsRulesCache): never changed once made.
type lsRules struct {
	// control is X-LiteSpeed-Cache-Control as the rules' TTL spells it,
	// used when the response carries none; nil: none.
	control     []byte
	varyCookies []string
	ttl         int64 // what it was made of, with the vary cookies
	private     bool
	disabled    bool // CacheDisable: control is no-cache
	// respect: control is CacheEnable's, which the response's own
	// Cache-Control no-cache, no-store or private still overrules
	// (CacheIgnoreCacheControl on clears it).
	respect bool
}

// lsRules is what the fill needs of the request's LiteSpeed cache rules;
// nil when they set no TTL, no vary cookie and no CacheDisable.
func (r *request) lsRules() *lsRules {
	lc := r.lsCache()
	if lc == nil || lc.TTL <= 0 && len(lc.VaryCookies) == 0 && !lc.Disabled {
		return nil
	}
	return r.s.lsRules.get(lc)
}

// lsRulesCache keeps the lsRules a site's rules have made, by their vary
// cookies (a handful of distinct values: what the files say), so a fill
// does not split the same list again.
type lsRulesCache struct {
	mu sync.Mutex // guards m
	m  map[string]*lsRules
}

// lsRulesMax bounds the values kept; past it the map is dropped whole.
const lsRulesMax = 64

func (c *lsRulesCache) get(lc *htaccess.Cache) *lsRules {
	c.mu.Lock()
	ls := c.m[string(lc.VaryCookies)]
	c.mu.Unlock()
	if ls != nil && ls.ttl == lc.TTL && ls.private == lc.Private && ls.disabled == lc.Disabled && ls.respect == respects(lc) {
		return ls
	}
	ls = newLSRules(lc)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= lsRulesMax {
		c.m = make(map[string]*lsRules)
	}
	c.m[string(lc.VaryCookies)] = ls
	c.mu.Unlock()
	return ls
}

// respects reports whether the response's Cache-Control may still keep
// a page the rules cache out of the cache: CacheEnable's blanket TTL,
// not a rule's, and no CacheIgnoreCacheControl on.
func respects(lc *htaccess.Cache) bool { return lc.Enabled && !lc.IgnoreCacheControl }

func newLSRules(lc *htaccess.Cache) *lsRules {
	ls := &lsRules{ttl: lc.TTL, private: lc.Private, disabled: lc.Disabled, respect: respects(lc)}
	switch {
	case lc.Disabled:
		ls.control = []byte("no-cache")
	case lc.TTL > 0:
		kind := "public"
		if lc.Private {
			kind = "private"
		}
		ls.control = []byte(kind + ",max-age=" + strconv.FormatInt(lc.TTL, 10))
	}
	for _, c := range strings.Split(string(lc.VaryCookies), ",") {
		if c = strings.TrimSpace(c); c != "" {
			ls.varyCookies = append(ls.varyCookies, c)
		}
	}
	return ls
}

// overruled reports whether a response's Cache-Control keeps it out
// of CacheEnable's blanket caching: no-cache, no-store or private, as
// LiteSpeed reads the response's Cache-Control unless told to ignore it
// (CacheIgnoreCacheControl on). A rule's E=Cache-Control decides for
// its URLs and is not overruled.
func (ls *lsRules) overruled(cacheControl []byte) bool {
	if !ls.respect || len(cacheControl) == 0 {
		return false
	}
	cc := policy.ParseCacheControl(cacheControl)
	return cc.NoCache || cc.NoStore || cc.Private
}

// htHeader is the request header as the rules read it. Peek("Cookie")
// on a fasthttp header whose cookies were parsed (an HTTP/2 request's,
// a fragment's) writes them out anew into a fresh slice; this writes
// them into a buffer kept with the request.
type htHeader struct {
	h      *fasthttp.RequestHeader
	cookie []byte
}

func (a *htHeader) Peek(key string) []byte {
	if len(key) != len("Cookie") || !strings.EqualFold(key, "Cookie") {
		return a.h.Peek(key)
	}
	a.cookie = a.cookie[:0]
	for name, value := range a.h.Cookies() {
		if len(a.cookie) > 0 {
			a.cookie = append(a.cookie, "; "...)
		}
		a.cookie = append(append(append(a.cookie, name...), '='), value...)
	}
	return a.cookie
}

// htKey hashes everything of the request the rules may read — the
// request line, every header, the client's address and port, the scheme
// — for the tree's memo of lookups. The pieces are gathered in one
// buffer kept with the request and hashed at once (maphash's Write
// costs more per call than per byte). raw: the header's raw lines are
// what it carries (a client's request; a fragment's sub-request holds
// copies of its page's, without what was removed since). It does not
// allocate once the buffer has grown.
func (r *request) htKey(raw bool) uint64 {
	h := r.header()
	b := append(r.htKeyBuf[:0], h.Method()...)
	b = append(append(b, 0), h.RequestURI()...)
	b = append(append(b, 0), h.Protocol()...)
	b = append(append(b, 0), h.Host()...)
	b = append(b, 0)
	if lines := h.RawHeaders(); len(lines) > 0 && raw {
		b = append(b, lines...)
	} else {
		for k, v := range h.All() {
			b = append(append(append(append(b, k...), ':'), v...), '\n')
		}
	}
	b = append(b, r.ip16[:]...)
	b = append(b, byte(r.port), byte(r.port>>8))
	if r.tls {
		b = append(b, 1)
	}
	r.htKeyBuf = b
	return maphash.Bytes(r.p.idSeed, b)
}

// docrootKey is the key a docroot site's handler remembers its own
// evaluation of the rules under (docroot.Handler.DoForKey), so that a
// request the cache passes or misses does not run them a second time:
// htKey's hash of the client's request and connection, whether the
// upstream request is a fill's (GET, without validators and encodings)
// or a pass's, and the local address the docroot is told of; the rest
// of the upstream request follows from these and the site's config
// (whose generation has a tree of its own). 0: none (a fragment, a
// proxy-mode site, a request the stage did not hash).
func (r *request) docrootKey(fill bool) uint64 {
	if r.htHash == 0 || r.s.Docroot == nil {
		return 0
	}
	var mh maphash.Hash
	mh.SetSeed(r.p.idSeed)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], r.htHash)
	mh.Write(b[:])
	if fill {
		mh.WriteByte(1)
	}
	if ap := addrPort(r.ctx.LocalAddr()); ap.IsValid() {
		a := ap.Addr().As16()
		mh.Write(a[:])
	}
	return mh.Sum64() | 1 // never 0
}

var htOutcomes = sync.Pool{New: func() any { return new(htaccess.Outcome) }}

// applyOriginExpires (proxy mode) sets the browser-cache headers the
// origin's .htaccess asks for (ExpiresByType, as the LiteSpeed Cache
// plugin writes it) on an answer that has none, as LiteSpeed or Apache's
// mod_expires would: after the cache decided, so a year's max-age for
// browsers does not become ramjet's TTL. A stored copy keeps its Expires
// date; browsers go by max-age and Age. req is what went upstream.
func applyOriginExpires(s *site, req *fasthttp.Request, resp *fasthttp.Response) {
	t := s.ht
	if t == nil || s.Docroot != nil || len(resp.Header.Peek("Expires")) > 0 {
		return
	}
	o := htOutcomes.Get().(*htaccess.Outcome)
	defer htOutcomes.Put(o)
	hr := htaccess.Request{Method: req.Header.Method(), Path: req.URI().Path(), Query: req.URI().QueryString(),
		Host: req.Header.Host(), Protocol: req.Header.Protocol(), Header: &req.Header, OneRound: true}
	t.Eval(&hr, o)
	if o.Status == 0 {
		o.Apply(htaccess.Answer{Status: resp.StatusCode()}, &resp.Header, time.Now())
	}
}
