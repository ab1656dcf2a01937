package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/esi"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// ESI pages are stored parsed (cache.Entry.Doc) and assembled on every
// hit from the page's literal segments and its fragments. Fragments go
// through the same cache: public ones are shared entries with their own
// TTL and tags, private ones live in the private cache under the user's
// identity. The assembled page itself is never stored.

// ESIConfig bounds assembly.
type ESIConfig struct {
	MaxDepth    int           // nested includes; 0 means 3
	MaxIncludes int           // include points per page; 0 means 64
	Timeout     time.Duration // per fragment; 0 means 2s
	// AllowHosts may be included from besides the page's own host.
	AllowHosts []string
}

var errForeignHost = errors.New("proxy: esi include of another host")

// parseESI pre-parses a page marked for ESI at store time.
func (p *Proxy) parseESI(g *generation, e *cache.Entry) {
	max := g.cfg.ESI.MaxIncludes
	if max <= 0 {
		max = 64
	}
	if !esi.HasMarkup(e.Body) {
		return
	}
	doc, stats := esi.Parse(e.Body, max)
	if stats.Malformed > 0 {
		p.metrics.esiMalformed.Add(stats.Malformed)
		p.log.Debug("malformed ESI markup passed through or dropped", "count", stats.Malformed)
	}
	e.Doc = doc
	e.Gzip, e.Brotli = nil, nil // compressed after assembly, not before
}

// wantsESI reports whether an origin response asks for ESI processing.
func wantsESI(h *fasthttp.ResponseHeader) bool {
	return policy.ParseLSCacheControl(h.Peek("X-Litespeed-Cache-Control")).ESI ||
		policy.ParseSurrogateControl(h.Peek("Surrogate-Control")).ESI
}

// relayAssembled answers with an ESI page the cache does not keep (a
// logged-in user's page, a no-cache page): assembled all the same, so the
// client never sees markup. It reports false when the body is too large
// to assemble, with the bytes already read, and the caller streams it as
// it is.
func (p *Proxy) relayAssembled(ctx *fasthttp.RequestCtx, s *site, resp *fasthttp.Response, status []byte) (bool, []byte) {
	g := p.gen.Load()
	body, complete, err := readBody(resp, g.cfg.MaxObjectSize)
	switch {
	case err != nil:
		releaseResponse(resp)
		p.writeError(ctx, err)
		return true, nil
	case !complete:
		return false, body
	}
	now := cache.Now()
	e := newEntry(g, resp, body, &policy.Decision{ESI: true}, now)
	e.Stored, e.InitialAge = now, 0
	cookies := ownCookies(&resp.Header)
	releaseResponse(resp)
	p.parseESI(g, e)
	p.serve(ctx, s, e, now, status)
	ctx.Response.Header.Del("Age")
	addCookies(&ctx.Response.Header, cookies)
	return true, nil
}

// serve writes an entry: assembled when it is an ESI page, else as stored.
func (p *Proxy) serve(ctx *fasthttp.RequestCtx, s *site, e *cache.Entry, now int64, status []byte) {
	doc, ok := e.Doc.(*esi.Document)
	if !ok {
		serveEntry(ctx, s, e, now, status)
		return
	}
	p.serveAssembled(ctx, s, e, doc, now, status)
}

func (p *Proxy) serveAssembled(ctx *fasthttp.RequestCtx, s *site, e *cache.Entry, doc *esi.Document, now int64, status []byte) {
	g := p.gen.Load()
	// Headers as stored, without the page's validators (the assembled body
	// differs per request); the body is assembled straight into the
	// response buffer.
	plain := *e
	plain.Doc, plain.Body, plain.ETag, plain.ETagWeak, plain.LastModified = nil, nil, nil, nil, nil
	serveEntry(ctx, s, &plain, now, status)
	if ctx.Response.StatusCode() == fasthttp.StatusNotModified {
		return
	}
	f := newFragmentFetcher(p, g, ctx)
	f.debug = s.DebugHeaders
	reports, err := esi.Assemble(context.Background(), ctx.Response.BodyWriter(), doc, f.fetch, esi.AssembleConfig{
		MaxDepth: g.cfg.ESI.MaxDepth, Timeout: g.cfg.ESI.Timeout,
	})
	if err != nil {
		p.writeError(ctx, err)
		return
	}
	for _, r := range reports {
		if r.Err != nil && !errors.Is(r.Err, esi.ErrAltServed) {
			p.metrics.esiFragmentErrors.Inc()
			p.log.Warn("esi fragment failed; empty block served", "src", r.Src, "depth", r.Depth, "err", r.Err)
		}
	}
	if s.DebugHeaders {
		ctx.Response.Header.Set("X-Ramjet-Esi", strings.Join(f.outcomes, ", "))
	}
	gzipAssembled(ctx, g, e)
}

// gzipAssembled compresses an assembled page for clients that take gzip.
// The body differs per request, so this is paid per hit: the fastest
// level (BenchmarkGzipAssembled: ~19 µs for 30 KB here).
func gzipAssembled(ctx *fasthttp.RequestCtx, g *generation, e *cache.Entry) {
	body := ctx.Response.Body()
	if !g.cfg.Compress.Gzip || len(body) < max(g.cfg.Compress.MinSize, 1) || !g.compressible(e.ContentType) ||
		!accepts(ctx.Request.Header.Peek("Accept-Encoding"), encGzip) {
		return
	}
	buf := gzipBufs.Get().(*[]byte)
	defer gzipBufs.Put(buf)
	*buf = fasthttp.AppendGzipBytesLevel((*buf)[:0], body, fasthttp.CompressBestSpeed)
	ctx.Response.SetBody(*buf)
	ctx.Response.Header.SetCanonical(hdrContentEncoding, encGzip)
	if !bytes.Contains(bytes.ToLower(ctx.Response.Header.Peek("Vary")), []byte("accept-encoding")) {
		ctx.Response.Header.Add("Vary", "Accept-Encoding")
	}
}

var gzipBufs = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// fragmentFetcher fetches the includes of one page request. Fetches run
// in parallel, and fasthttp headers are not safe for concurrent use (even
// Peek writes a scratch buffer), so it works from a snapshot of the page
// request taken before assembly, behind a mutex.
type fragmentFetcher struct {
	p  *Proxy
	g  *generation
	id uint64 // the page request's private identity

	scheme, host, base  string // of the page: base is its directory
	forwardedFor, proto string

	mu       sync.Mutex // guards hdr and outcomes
	hdr      fasthttp.RequestHeader
	outcomes []string // "src hit|miss|error", for the debug header
	debug    bool     // keep outcomes (the site asked for debug headers)
}

// note records how one fragment was served, for debug_headers.
func (f *fragmentFetcher) note(src, how string) {
	if !f.debug {
		return
	}
	f.mu.Lock()
	f.outcomes = append(f.outcomes, src+" "+how)
	f.mu.Unlock()
}

func newFragmentFetcher(p *Proxy, g *generation, ctx *fasthttp.RequestCtx) *fragmentFetcher {
	f := &fragmentFetcher{p: p, g: g, id: p.identity(ctx),
		scheme: string(requestScheme(ctx)), host: string(ctx.Host()), proto: string(requestScheme(ctx))}
	base := string(pathOf(ctx))
	f.base = base[:strings.LastIndexByte(base, '/')+1]
	ctx.Request.Header.CopyTo(&f.hdr)
	stripHopByHop(&f.hdr, ctx.Request.Header.Peek("Connection"))
	for _, h := range fillOnly {
		f.hdr.Del(h)
	}
	f.forwardedFor = ctx.RemoteIP().String()
	if prior := ctx.Request.Header.Peek("X-Forwarded-For"); len(prior) > 0 {
		f.forwardedFor = string(prior) + ", " + f.forwardedFor
	}
	return f
}

func (f *fragmentFetcher) identity() uint64 { return f.id }

// fetch returns one fragment's body: from the cache (public, or the
// user's private copy) or from the origin, storing what may be stored.
func (f *fragmentFetcher) fetch(ctx context.Context, inc *esi.Include, src string, depth int) ([]byte, error) {
	body, hit, err := f.fetchFragment(ctx, inc, src)
	switch {
	case err != nil:
		f.note(src, "error")
	case hit:
		f.note(src, "hit")
	default:
		f.note(src, "miss")
	}
	return body, err
}

func (f *fragmentFetcher) fetchFragment(ctx context.Context, inc *esi.Include, src string) ([]byte, bool, error) {
	host, path, query, err := f.resolve(src)
	if err != nil {
		return nil, false, err
	}
	s := f.g.router.route([]byte(host))
	st := acquireState()
	defer releaseState(st)
	st.key = appendKey(st.key[:0], st, []byte(f.scheme), []byte(host), []byte(path), []byte(query), s.drop)
	private := strings.Contains(strings.ToLower(inc.CacheControl), "private")
	if body, ok := f.cached(st, private); ok {
		return body, true, nil
	}
	if private {
		body, _, err := f.fill(ctx, s, st, host, path, query, true)
		return body, false, err
	}
	// Concurrent pages missing one public fragment share one fill.
	key := string(st.key)
	fl, lead := f.p.flights.join(key)
	if !lead {
		select {
		case <-fl.done:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		if body, ok := f.cached(st, false); ok {
			return body, true, nil
		}
		body, _, err := f.fill(ctx, s, st, host, path, query, false)
		return body, false, err
	}
	body, stored, err := f.fill(ctx, s, st, host, path, query, false)
	f.p.flights.finish(key, fl, &result{stored: stored})
	return body, false, err
}

// resolve makes src absolute against the page and refuses other hosts
// unless allow-listed (no SSRF through markup).
func (f *fragmentFetcher) resolve(src string) (host, path, query string, err error) {
	host, path, query = splitURL(f.host, src)
	if !strings.HasPrefix(path, "/") {
		path = f.base + path
	}
	if !strings.EqualFold(host, f.host) && !allowed(f.g.cfg.ESI.AllowHosts, host) {
		return "", "", "", fmt.Errorf("%w: %s", errForeignHost, host)
	}
	return host, path, query, nil
}

func allowed(list []string, host string) bool {
	for _, h := range list {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// cached looks the fragment up in the public or the private cache.
func (f *fragmentFetcher) cached(st *reqState, private bool) ([]byte, bool) {
	c, key := f.p.cache, st.key
	if private {
		if f.p.private == nil || f.identity() == 0 {
			return nil, false
		}
		st.pkey = appendPrivateKey(st.pkey[:0], f.identity(), st.key)
		c, key = f.p.private, st.pkey
	}
	o := c.Lookup(c.Hash(key), key)
	if o == nil {
		return nil, false
	}
	f.mu.Lock()
	st.variant = appendVariant(st.variant[:0], &f.hdr, o.Vary)
	f.mu.Unlock()
	e := o.Variant(st.variant)
	if e == nil || c.Status(e, cache.Now()) != cache.Fresh {
		return nil, false
	}
	return e.Body, true
}

// fill fetches a fragment with the page request's headers (same host, so
// Cookie and Authorization go along) and stores it by its own rules.
func (f *fragmentFetcher) fill(ctx context.Context, s *site, st *reqState, host, path, query string, private bool) ([]byte, bool, error) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	f.mu.Lock()
	f.hdr.CopyTo(&req.Header)
	f.mu.Unlock()
	uri := path
	if query != "" {
		uri += "?" + query
	}
	req.SetRequestURI(uri)
	req.Header.SetHost(host)
	if !strings.EqualFold(host, f.host) {
		// An allow-listed other host gets no credentials of the user's.
		req.Header.DelAllCookies()
		req.Header.Del("Authorization")
	}
	req.Header.Set("X-Forwarded-For", f.forwardedFor)
	req.Header.Set("X-Forwarded-Proto", f.proto)
	req.Header.Set("X-Forwarded-Host", f.host)
	req.Header.SetMethod(fasthttp.MethodGet)
	if dl, ok := ctx.Deadline(); ok {
		// The assembler waits for every fetch it started: give up with it.
		req.SetTimeout(time.Until(dl))
	}
	resp := fasthttp.AcquireResponse()
	defer releaseResponse(resp)
	born := cache.Now()
	if err := doUpstream(s, req, resp); err != nil {
		return nil, false, err
	}
	f.p.applyResponsePurges(&resp.Header, req.Header.Host(), born-1, f.identity())
	if code := resp.StatusCode(); code != fasthttp.StatusOK && code != fasthttp.StatusNoContent {
		return nil, false, fmt.Errorf("proxy: esi fragment %s: status %d", uri, code)
	}
	body, complete, err := readBody(resp, f.g.cfg.MaxObjectSize)
	if err != nil || !complete {
		return nil, false, fmt.Errorf("proxy: esi fragment %s: body: %w", uri, errors.Join(err, fasthttp.ErrBodyTooLarge))
	}
	now := cache.Now()
	in := policyInput(req, resp, s, now, false)
	d := policy.Decide(&in)
	return body, f.store(s, st, req, resp, body, &d, born, now), nil
}

// store keeps a fragment by its own response's rules and reports whether
// it went into the shared cache.
func (f *fragmentFetcher) store(s *site, st *reqState, req *fasthttp.Request, resp *fasthttp.Response, body []byte, d *policy.Decision, born, now int64) bool {
	switch {
	case d.Store:
		e := newEntry(f.g, resp, body, d, now)
		e.Born, e.Gzip, e.Brotli = born, nil, nil
		vary := varySpec(s, d)
		e.Variant = string(appendVariant(nil, &req.Header, vary))
		f.p.cache.Insert(f.p.cache.Hash(st.key), string(st.key), vary, e)
		f.p.metrics.stored.Inc()
		return true
	case d.Private && d.TTL > 0 && f.p.private != nil && f.identity() != 0:
		f.p.storePrivate(f.g, s, req, resp, body, d, st.key, f.identity(), born, now)
	}
	return false
}

// storeInlines keeps the bodies of a page's <esi:inline> blocks as the
// fragments of their names (LiteSpeed), so later includes of the name hit.
// Only public blocks with a lifetime in their cache-control are kept.
func (p *Proxy) storeInlines(g *generation, pageKey string, e *cache.Entry, now int64) {
	doc, ok := e.Doc.(*esi.Document)
	if !ok {
		return
	}
	origin, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(pageKey, "http://"), "https://"), "/")
	scheme := pageKey[:strings.Index(pageKey, "://")]
	for _, seg := range doc.Segments {
		inc := seg.Include
		if inc == nil || inc.Inline == nil {
			continue
		}
		cc := policy.ParseLSCacheControl([]byte(inc.CacheControl))
		ttl := max(cc.MaxAge, cc.SMaxAge)
		if cc.Private || cc.NoCache || cc.NoStore || ttl <= 0 {
			continue
		}
		host, path, query := splitURL(origin, inc.Src)
		if !strings.EqualFold(host, origin) || !strings.HasPrefix(path, "/") {
			continue
		}
		s := g.router.route([]byte(host))
		st := acquireState()
		st.key = appendKey(st.key[:0], st, []byte(scheme), []byte(host), []byte(path), []byte(query), s.drop)
		f := &cache.Entry{Status: 200, Body: inc.Inline, Stored: now, Born: e.Born,
			FreshUntil: now + int64(ttl)*int64(time.Second)}
		f.StaleUntil, f.ErrorUntil = f.FreshUntil, f.FreshUntil
		f.Tags = policy.AppendTags(nil, []byte(inc.CacheTag))
		p.cache.Insert(p.cache.Hash(st.key), string(st.key), cache.VarySpec{}, f)
		releaseState(st)
	}
}
