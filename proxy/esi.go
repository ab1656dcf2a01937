package proxy

import (
	"bytes"
	"context"
	"errors"
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
// logged-in user's page, a no-cache page): decoded and assembled all the
// same, so the client never sees markup. It reports false when the body
// is too large to assemble or in a coding ramjet cannot undo, with the
// bytes already read, and the caller relays it as it came.
func (r *request) relayAssembled(resp *fasthttp.Response, status []byte) (bool, []byte) {
	body, complete, err := readBody(resp, r.g.cfg.MaxObjectSize)
	switch {
	case err != nil:
		releaseResponse(resp)
		r.p.writeError(r.ctx, err)
		return true, nil
	case !complete:
		return false, body
	}
	decoded, err := decodeBody(body, resp.Header.ContentEncoding(), r.g.cfg.MaxObjectSize)
	if err != nil {
		r.p.log.Info("ESI page relayed unassembled: body ramjet cannot decode", "uri", string(r.ctx.RequestURI()), "err", err)
		return false, body
	}
	body = decoded
	describeDecoded(&resp.Header)
	now := r.s.cache.Now()
	e := &cache.Entry{Body: body} // compressed, if ever, after assembly
	takeResponse(e, r.s, resp, &policy.Decision{}, now)
	e.InitialAge = 0 // served as made now; never stored
	cookies := ownCookies(&resp.Header)
	releaseResponse(resp)
	r.p.parseESI(r.g, e)
	r.serve(e, now, status)
	r.ctx.Response.Header.Del("Age")
	addCookies(&r.ctx.Response.Header, cookies)
	return true, nil
}

// serveAssembled writes an ESI page: the stored headers, without the
// page's validators (the assembled body differs per request), and the
// body assembled straight into the response buffer from the page's
// segments and its fragments, each fetched through the pipeline.
func (r *request) serveAssembled(e *cache.Entry, doc *esi.Document, now int64, status []byte) {
	ctx, g := r.ctx, r.g
	plain := *e
	plain.Doc, plain.Body, plain.ETag, plain.ETagWeak, plain.LastModified = nil, nil, nil, nil, nil
	serveEntry(ctx, r.s, &plain, now, status)
	if ctx.Response.StatusCode() == fasthttp.StatusNotModified {
		return
	}
	f := newFragmentFetcher(r)
	f.inlines = newPageInlines(r, e, doc)
	reports, err := esi.Assemble(context.Background(), ctx.Response.BodyWriter(), doc, f.fetch, esi.AssembleConfig{
		MaxDepth: g.cfg.ESI.MaxDepth, Timeout: g.cfg.ESI.Timeout,
	})
	if err != nil {
		r.p.writeError(ctx, err)
		return
	}
	for _, rep := range reports {
		if rep.Err != nil && !errors.Is(rep.Err, esi.ErrAltServed) {
			r.p.metrics.esiFragmentErrors.Inc()
			r.p.log.Warn("esi fragment failed; empty block served", "src", rep.Src, "depth", rep.Depth, "err", rep.Err)
		}
	}
	if r.s.DebugHeaders {
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
