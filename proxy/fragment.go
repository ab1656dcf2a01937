package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	p   *Proxy
	g   *generation
	tls bool
	ip  net.IP // the page's client

	host, base          string // of the page: base is its directory
	forwardedFor, proto string

	mu       sync.Mutex // guards hdr and outcomes
	hdr      fasthttp.RequestHeader
	outcomes []string // "src hit|miss|error", for the debug header
	debug    bool     // keep outcomes (the site asked for debug headers)
}

func newFragmentFetcher(r *request) *fragmentFetcher {
	ctx := r.ctx
	f := &fragmentFetcher{p: r.p, g: r.g, tls: r.tls, ip: ctx.RemoteIP(), debug: r.s.DebugHeaders,
		host: string(ctx.Host()), proto: string(requestScheme(ctx))}
	base := string(pathOf(&ctx.Request))
	f.base = base[:strings.LastIndexByte(base, '/')+1]
	ctx.Request.Header.CopyTo(&f.hdr)
	stripHopByHop(&f.hdr, ctx.Request.Header.Peek("Connection"))
	for _, h := range fillOnly {
		f.hdr.Del(h)
	}
	f.forwardedFor = f.ip.String()
	if prior := ctx.Request.Header.Peek("X-Forwarded-For"); len(prior) > 0 {
		f.forwardedFor = string(prior) + ", " + f.forwardedFor
	}
	return f
}

// fetch is the page's esi.Fetcher: one fragment through the pipeline.
func (f *fragmentFetcher) fetch(ctx context.Context, inc *esi.Include, src string, _ int) ([]byte, error) {
	host, path, query, err := f.resolve(src)
	if err != nil {
		f.note(src, "error")
		return nil, err
	}
	sub := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(sub)
	f.subRequest(sub, host, path, query)
	r := requestPool.Get().(*request)
	defer r.release()
	r.p, r.g, r.req, r.tls, r.c = f.p, f.g, sub, f.tls, &f.p.metrics.fragments
	r.fragState = fragment{f: f, ctx: ctx, private: strings.Contains(strings.ToLower(inc.CacheControl), "private")}
	r.frag = &r.fragState
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

// subRequest makes sub the fragment's request: the page's headers (same
// host, so Cookie and Authorization go along), for the fragment's URL.
func (f *fragmentFetcher) subRequest(sub *fasthttp.Request, host, path, query string) {
	f.mu.Lock()
	f.hdr.CopyTo(&sub.Header)
	f.mu.Unlock()
	var buf [256]byte
	uri := append(buf[:0], path...)
	if query != "" {
		uri = append(append(uri, '?'), query...)
	}
	sub.Header.SetRequestURIBytes(uri)
	sub.Header.SetHost(host)
	if !strings.EqualFold(host, f.host) {
		// An allow-listed other host gets no credentials of the user's.
		sub.Header.DelAllCookies()
		sub.Header.Del("Authorization")
	}
	sub.Header.Set("X-Forwarded-For", f.forwardedFor)
	sub.Header.Set("X-Forwarded-Proto", f.proto)
	sub.Header.Set("X-Forwarded-Host", f.host)
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

// fragment is the state of one include's request that a client request
// does not have: where the answer goes and how long the page waits.
type fragment struct {
	f *fragmentFetcher
	// ctx ends when the page stops waiting for the fragment.
	ctx context.Context
	// private: the include asked for a private copy (cache-control
	// "private"): looked up and stored only under the user's identity.
	private bool

	body []byte // the answer: the fragment's body, or err
	err  error
}

// upstreamRequest is the request a fill of the fragment sends: its
// sub-request, given up on with the page.
func (fr *fragment) upstreamRequest(sub *fasthttp.Request) *fasthttp.Request {
	req := fasthttp.AcquireRequest()
	sub.CopyTo(req)
	if dl, ok := fr.ctx.Deadline(); ok {
		// The assembler waits for every fetch it started: give up with it.
		req.SetTimeout(time.Until(dl))
	}
	return req
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

// fragmentBody reads a relayed fragment whole; one over the size limit
// (prefix is then what store read of it) fails.
func fragmentBody(resp *fasthttp.Response, prefix []byte, limit int64) ([]byte, error) {
	defer releaseResponse(resp)
	if prefix != nil {
		return nil, fmt.Errorf("proxy: esi fragment body: %w", fasthttp.ErrBodyTooLarge)
	}
	body, complete, err := readBody(resp, limit)
	if err != nil || !complete {
		return nil, fmt.Errorf("proxy: esi fragment body: %w", errors.Join(err, fasthttp.ErrBodyTooLarge))
	}
	return body, nil
}
