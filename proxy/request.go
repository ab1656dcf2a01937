package proxy

import (
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// request is one request on its way through the stages of its kind. It
// holds what every stage needs; each stage keeps the rest in a part of
// its own, declared in its file with its reset. The one hand-off between
// stages is lookup's to fill (handoff, lookup.go). Only its stage writes
// a part; what later stages read of one is its result: the client
// (remoteIP), the rules' cache directives (lsCache), whether the request
// passes the cache (pass) and its identity, the key, the WAF's word (the
// log line) and the time lookup looked (a hit's Age). Requests are
// pooled, with their parts' buffers, so that a hit allocates nothing.
type request struct {
	p *Proxy
	// g is the generation the request started with; it keeps it to the
	// end, fragments included.
	g *generation
	s *site // set by admit
	// ctx is the client's connection; nil for a fragment.
	ctx *fasthttp.RequestCtx
	// req is what is asked: the client's request, or the fragment's own
	// sub-request (copied from its page's, which fragments fetched in
	// parallel cannot share: fasthttp headers are not safe for concurrent
	// use, even to read).
	req  *fasthttp.Request
	kind kind // which stages it runs (pipeline.go)
	tls  bool // came over TLS; a fragment: its page did
	// via is what the transport tells of the client's request: its
	// protocol, whose TLS, how to send interim responses. Nil for a
	// fragment.
	via streamctx.Transport
	c   *requestCounters
	res result // the answer

	clientPart  // who asks (client.go)
	rewritePart // what the .htaccess rules decided (rewrite.go)
	accessPart  // pass uncached, credentials, private identity (identity.go)
	keyPart     // the cache key (key.go)
	lookupPart  // what lookup found, and its hand-off to fill (lookup.go)
	wafPart     // what the WAF made of the request (guard.go)
	crawlerPart // the crawler's upstream slot (crawler.go)
	logPart     // the access log line (log.go)
	fragPart    // a fragment's include and sub-request (fragment.go)
}

var requestPool = sync.Pool{New: func() any {
	return &request{keyPart: newKeyPart(), lookupPart: newLookupPart(), logPart: newLogPart()}
}}

// clientRequest is the request a client sent on ctx, on the current
// generation until release.
func (p *Proxy) clientRequest(ctx *fasthttp.RequestCtx, k kind) *request {
	r := requestPool.Get().(*request)
	r.p, r.g, r.ctx, r.req, r.kind = p, p.enter(), ctx, &ctx.Request, k
	r.tls, r.c, r.via = ctx.IsTLS(), &p.metrics.pages, streamctx.TransportOf(ctx)
	return r
}

// release returns r to the pool; nothing of it may be used after.
func (r *request) release() {
	r.releaseCrawler() // held for the whole exchange with the upstream
	if r.kind != kindFragment {
		r.g.leave() // a fragment has its page's generation, which entered it
	}
	if r.remoteSet {
		r.ctx.SetRemoteAddr(nil) // ctx outlives r, which goes back to the pool
	}
	r.endWAF()
	r.resetParts()
	r.p, r.g, r.s, r.ctx, r.req, r.kind, r.tls, r.via, r.c = nil, nil, nil, nil, nil, kindPage, false, nil, nil
	r.res.reset()
	requestPool.Put(r)
}

// resetParts leaves every part as a fresh request has it, but for its
// buffers, kept for the next request (TestEachPartResetIsAFreshPart).
// The parts' resets write field by field, not a fresh struct: the
// compiler clears a struct of more than four words that holds pointers
// through the GC's bulk write barrier (runtime.wbZero) whenever a cycle
// is marking, which is often under a hit load; a cut buffer (b[:0])
// writes its length only. An ESI page hit releases four requests: the
// struct literals cost it ~185 ns of ~7 µs (issue 28, BenchmarkServeESIHit).
func (r *request) resetParts() {
	r.clientPart.reset()
	r.rewritePart.reset()
	r.accessPart.reset()
	r.keyPart.reset()
	r.lookupPart.reset()
	r.wafPart.reset()
	r.crawlerPart.reset()
	r.logPart.reset()
	r.fragPart.reset()
}

// header is the request's header.
func (r *request) header() *fasthttp.RequestHeader { return &r.req.Header }

// answer makes e the request's answer, served from the cache.
func (r *request) answer(e *cache.Entry, status []byte) verdict {
	r.res.entry, r.res.status, r.res.hit = e, status, true // r.res is empty until a stage answers
	return answered
}
