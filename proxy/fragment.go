package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/esi"
)

// ESI pages are stored parsed (cache.Entry.Doc) and assembled on every
// hit from the page's literal segments and its fragments. Each fragment
// is a request of its own through the same stages as a client's — the
// page's generation, its client's identity and headers — so it is looked
// up, coalesced, filled, revalidated and stored like a page: public
// fragments are shared entries with their own TTL and tags, private ones
// live in the private cache under the user's identity. The assembled page
// itself is never stored.

// fragmentFetcher fetches the includes of one page request. Fetches run
// in parallel and fasthttp headers are not safe for concurrent use, so
// each fragment's sub-request is copied from a snapshot of the page
// request taken before assembly, behind a mutex.
type fragmentFetcher struct {
	p *Proxy
	g *generation
	// fwd is what the page's upstream requests say of its client; its
	// client and tls are the page's, its fragments' too.
	fwd forwarding
	id  uint64 // the page client's private identity, its fragments' on its host

	host, base string // of the page: base is its directory
	// keyHost is host as splitURL reads it (normalHost): what a relative
	// src resolves to, normalised once per page, not per include.
	keyHost string
	// inlines: the page's stored inline bodies, read by its own includes;
	// nil when it has none.
	inlines *pageInlines

	mu       sync.Mutex // guards hdr and outcomes
	hdr      fasthttp.RequestHeader
	outcomes []string // "src hit|miss|error", for the debug header
	debug    bool     // keep outcomes (the site asked for debug headers)
	// authorized: the page's request carries Authorization, so do its
	// fragments on its host. Beside debug, sharing its word: with its
	// malloc header the fetcher then fits the 576-byte size class, one
	// allocation per ESI page hit.
	authorized bool
}

func newFragmentFetcher(r *request) *fragmentFetcher {
	ctx := r.ctx
	f := &fragmentFetcher{p: r.p, g: r.g, debug: r.s.DebugHeaders, host: string(ctx.Host()), fwd: r.forwarding()}
	f.keyHost = normalHost(f.host)
	base := string(pathOf(&ctx.Request))
	f.base = base[:strings.LastIndexByte(base, '/')+1]
	ctx.Request.Header.CopyTo(&f.hdr)
	stripHopByHop(&f.hdr, &ctx.Request.Header)
	for _, h := range fillOnly {
		delCanonical(&f.hdr, h) // no normalising of the name, per page hit
	}
	f.id, f.authorized = r.identity(), r.authorized
	return f
}

// fetch is the page's esi.Fetcher: one fragment through the pipeline.
func (f *fragmentFetcher) fetch(ctx context.Context, inc *esi.Include, src string, depth int) ([]byte, error) {
	if depth == 1 {
		if body, ok := f.inlines.body(src); ok {
			f.note(src, "inline")
			return body, nil
		}
	}
	host, path, query, own, err := f.resolve(src)
	if err != nil {
		f.note(src, "error")
		return nil, err
	}
	r := requestPool.Get().(*request)
	defer r.release()
	f.subRequest(&r.sub, host, path, query, own)
	r.p, r.g, r.req, r.tls, r.c, r.kind = f.p, f.g, &r.sub, f.fwd.tls, &f.p.metrics.fragments, kindFragment
	r.setClient(f.fwd.client, 0)
	if !own {
		r.id, r.idDone = f.id, true // the page's own headers: its identity
	}
	r.fragAuthorized = !own && f.authorized
	r.frag = fragment{f: f, ctx: ctx, pageHeader: !own,
		private: strings.Contains(strings.ToLower(inc.CacheControl), "private")}
	f.p.run(r)
	switch {
	case r.frag.err != nil:
		f.note(src, "error")
	case r.res.hit:
		f.note(src, "hit")
	default:
		f.note(src, "miss")
	}
	return r.frag.body, r.frag.err
}

// subRequest makes sub the fragment's request line: GET of its URL on its
// host. A fragment of the page's own host reads the page's headers from
// the snapshot (variant, fill), so a hit copies none; one of an
// allow-listed other host gets a copy of its own without the user's
// credentials (own).
func (f *fragmentFetcher) subRequest(sub *fasthttp.Request, host, path, query string, own bool) {
	if own {
		f.mu.Lock()
		f.hdr.CopyTo(&sub.Header)
		f.mu.Unlock()
		sub.Header.DelAllCookies()
		sub.Header.Del("Authorization")
	}
	var buf [256]byte
	uri := append(buf[:0], path...)
	if query != "" {
		uri = append(append(uri, '?'), query...)
	}
	sub.Header.SetRequestURIBytes(uri)
	sub.Header.SetHost(host)
	sub.Header.SetMethod(fasthttp.MethodGet)
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

// resolve makes src absolute against the page and refuses other hosts
// unless allow-listed (no SSRF through markup); other says it names one.
func (f *fragmentFetcher) resolve(src string) (host, path, query string, other bool, err error) {
	host, path, query = splitRawURL(f.host, src)
	switch {
	case host == f.host:
		host = f.keyHost // a relative src (splitURL's result, taken once)
	case host != "":
		host = normalHost(host)
	}
	if !strings.HasPrefix(path, "/") {
		path = f.base + path
	}
	if other = host != f.host && !strings.EqualFold(host, f.host); other && !allowed(f.g.cfg.ESI.AllowHosts, host) {
		return "", "", "", false, fmt.Errorf("%w: %s", errForeignHost, host)
	}
	return host, path, query, other, nil
}

func allowed(list []string, host string) bool {
	for _, h := range list {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// fragPart is a fragment's own part of its request (kindFragment): the
// include and its sub-request; zero for a client's request. Kept with
// the request: no allocation per fragment.
type fragPart struct {
	frag fragment
	sub  fasthttp.Request // the sub-request; req points here
}

func (f *fragPart) reset() {
	if fr := &f.frag; fr.f != nil {
		fr.f, fr.ctx, fr.private, fr.pageHeader, fr.body, fr.err = nil, nil, false, false, nil, nil
		f.sub.Reset()
	}
}

// fragment is the state of one include's request that a client request
// does not have: where the answer goes and how long the page waits.
type fragment struct {
	f *fragmentFetcher
	// ctx ends when the page stops waiting for the fragment.
	ctx context.Context
	// private: the include asked for a private copy (cache-control
	// "private"): looked up and stored only under the user's identity.
	private bool
	// pageHeader: the sub-request's header fields are its page's, read
	// from the snapshot (withHeader); else it carries all its own
	// (another host's fragment).
	pageHeader bool

	body []byte // the answer: the fragment's body, or err
	err  error
}

// upstreamRequest is the request a fill of the fragment sends: its
// sub-request with its headers (Cookie and Authorization go along to the
// page's own host) and the forwarding ones, given up on with the page.
func (fr *fragment) upstreamRequest(sub *fasthttp.Request) *fasthttp.Request {
	req := fasthttp.AcquireRequest()
	fr.withHeader(sub, func(h *fasthttp.RequestHeader) { h.CopyTo(&req.Header) })
	req.Header.SetRequestURIBytes(sub.Header.RequestURI())
	req.Header.SetHostBytes(sub.Header.Host())
	req.Header.SetMethod(fasthttp.MethodGet)
	// As the page's request would be forwarded (setForwarded), on the
	// miss path only: most fragments are hits.
	setForwarding(&req.Header, &fr.f.fwd, []byte(fr.f.host))
	if dl, ok := fr.ctx.Deadline(); ok {
		// The assembler waits for every fetch it started: give up with it.
		req.SetTimeout(time.Until(dl))
	}
	return req
}

// withHeader runs fn on the fragment's headers: the sub-request's own, or
// the page's snapshot, which parallel fragments share behind its mutex.
func (fr *fragment) withHeader(sub *fasthttp.Request, fn func(*fasthttp.RequestHeader)) {
	if !fr.pageHeader {
		fn(&sub.Header)
		return
	}
	fr.f.mu.Lock()
	defer fr.f.mu.Unlock()
	fn(&fr.f.hdr)
}

// take turns the request's answer into the fragment's body. A fragment
// that is not a 200 or 204 failed: the page shows its alt or nothing.
func (fr *fragment) take(r *request) {
	res := &r.res
	status := 0
	switch {
	case res.err != nil:
		fr.err = res.err
		return
	case res.entry != nil:
		status, fr.body = res.entry.Status, res.entry.Body
	case res.resp != nil:
		status = res.resp.StatusCode()
		fr.body, fr.err = fragmentBody(res.resp, res.prefix, r.g.cfg.MaxObjectSize)
	}
	if fr.err == nil && status != fasthttp.StatusOK && status != fasthttp.StatusNoContent {
		fr.body, fr.err = nil, fmt.Errorf("proxy: esi fragment %s: status %d", r.req.Header.RequestURI(), status)
	}
}

// fragmentBody reads a relayed fragment whole and decoded; one over the
// size limit (prefix is then what store read of it), before or after
// decoding, or in a coding ramjet cannot undo, fails.
func fragmentBody(resp *fasthttp.Response, prefix []byte, limit int64) ([]byte, error) {
	defer releaseResponse(resp)
	if prefix != nil {
		return nil, fmt.Errorf("proxy: esi fragment body: %w", fasthttp.ErrBodyTooLarge)
	}
	body, complete, err := readBody(resp, limit)
	if err != nil || !complete {
		return nil, fmt.Errorf("proxy: esi fragment body: %w", errors.Join(err, fasthttp.ErrBodyTooLarge))
	}
	body, err = decodeBody(body, resp.Header.ContentEncoding(), limit)
	if err != nil {
		return nil, fmt.Errorf("proxy: esi fragment body: %w", err)
	}
	return body, nil
}
