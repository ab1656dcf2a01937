package proxy

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// request is one request on its way through the stages of its kind: a
// client's (ctx set) or an ESI fragment's (frag set). The stages read it
// and leave their results in it. Requests are pooled, with their key
// buffers, so that a hit allocates nothing.
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

	// Who asked (stageClient; a fragment: its page's client). client is
	// the single source of the client's address; ip16 and addr spell it
	// for net.IP and net.Addr users without allocating. port is 0 when
	// unknown (a client a trusted proxy named).
	client netip.Addr
	port   uint16
	ip16   [16]byte
	addr   net.TCPAddr
	// claimed: how many X-Forwarded-For hops, from the left, go on to
	// the origin before the client (-1: all of them).
	claimed int
	// terminator: the address is a behind_tls listener's peer, the TLS
	// terminator, as nothing named its client: it is trusted for nothing.
	terminator bool
	// remoteSet: ctx.SetRemoteAddr(&addr) was called, undone by release.
	remoteSet bool

	// pass is the Cache-Status of a request forwarded uncached (a method
	// the cache does not answer, a bypass); nil goes through the cache.
	pass []byte
	// authorized: the request carries Authorization; only shared entries
	// answer it (RFC 9111 3.5).
	authorized bool
	// fragAuthorized: a fragment whose page's request (whose headers it
	// shares) carries Authorization.
	fragAuthorized bool
	// id is the private-cache identity (0: none), computed on first use.
	id     uint64
	idDone bool

	key []byte // primary cache key
	// pathAt is where the key's target starts: key[pathAt:] is the
	// normalised path and query a fill sends upstream (keyTarget).
	pathAt  int
	variant []byte // the values the entry's vary spec selects
	pkey    []byte // private cache key
	params  [][]byte
	h       uint64 // hash of key in the shared cache
	now     int64

	// What lookup leaves for fill: the stale copy to revalidate (or to
	// serve if the origin fails), the Cache-Status fwd reason, and whether
	// concurrent misses of the key share one fill.
	stale    *cache.Entry
	fwd      string
	coalesce bool
	// passUntil: the URL's hit-for-pass marker lookup found lasts until
	// then (0: none).
	passUntil int64
	// crawlerSlot: the request holds one of its site's crawler slots
	// (crawler.go) until release.
	crawlerSlot bool

	res result // the answer

	// What the WAF made of the request (guard.go): its word for the log
	// line, the transaction a response inspection continues (nil unless
	// the site inspects responses), and the body it read.
	waf    wafResult
	wafTx  *waf.Tx
	wafLog accesslog.WAF // its log line's field; no allocation per line
	body   requestBody

	// start is when admit began, for the access log's request time (only
	// read when the site logs); logBuf holds its line, reused.
	start  time.Time
	logBuf []byte

	// ht is what the site's .htaccess rules decided (stageRewrite), valid
	// when r.s.ht is set; htReq and htLine are its input, reused.
	ht     htaccess.Outcome
	htReq  htaccess.Request
	htHdr  htHeader
	htLine []byte
	// htHash is htKey's hash of the request (0: not taken), from which
	// the docroot's key for the same rules is made (docrootKey).
	htHash uint64
	// htKeyBuf gathers what htKey hashes, reused.
	htKeyBuf []byte

	// frag is the include being fetched (kindFragment); zero for a
	// client's request. Kept with the request: no allocation per fragment.
	frag fragment
	sub  fasthttp.Request // a fragment's sub-request, req points here
}

var requestPool = sync.Pool{New: func() any {
	return &request{key: make([]byte, 0, 256), variant: make([]byte, 0, 64),
		params: make([][]byte, 0, 16), pkey: make([]byte, 0, 256), logBuf: make([]byte, 0, logBufStart)}
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
	r.client, r.port, r.claimed, r.terminator, r.remoteSet = netip.Addr{}, 0, 0, false, false
	clear(r.params)
	r.key, r.variant, r.pkey, r.params = r.key[:0], r.variant[:0], r.pkey[:0], r.params[:0]
	r.g, r.s, r.ctx, r.req, r.kind, r.via = nil, nil, nil, nil, kindPage, nil
	r.pass, r.id, r.idDone, r.stale, r.fwd, r.coalesce, r.authorized = nil, 0, false, nil, "", false, false
	r.fragAuthorized, r.passUntil, r.htHash, r.pathAt = false, 0, 0, 0
	r.res = result{}
	r.endWAF()
	if r.frag.f != nil {
		r.frag = fragment{}
		r.sub.Reset()
	}
	requestPool.Put(r)
}

// header is the request's header.
func (r *request) header() *fasthttp.RequestHeader { return &r.req.Header }

// remoteIP is the client's address (a fragment's: its page's client),
// valid until release: what PURGE trust, the private identity, the
// origin's X-Forwarded-For and the access log take. It is a trusted
// proxy's client, never the proxy.
func (r *request) remoteIP() net.IP { return net.IP(r.ip16[:]) }

// setClient makes a (with its port, 0 when unknown) the request's client.
func (r *request) setClient(a netip.Addr, port uint16) {
	if !a.IsValid() {
		a = netip.IPv4Unspecified() // not TCP: as fasthttp's RemoteIP says
	}
	r.client, r.port, r.ip16 = a.Unmap(), port, a.As16()
	r.addr = net.TCPAddr{IP: r.ip16[:], Port: int(port)}
}

// identity is the client's private-cache identity, 0 when it has none.
func (r *request) identity() uint64 {
	if !r.idDone {
		var site *patterns
		if r.s != nil {
			site = r.s.anonymous
		}
		r.id, r.idDone = r.p.identity(r.header(), r.remoteIP(), site), true
	}
	return r.id
}

// answer makes e the request's answer, served from the cache.
func (r *request) answer(e *cache.Entry, status []byte) verdict {
	r.res.entry, r.res.status, r.res.hit = e, status, true // r.res is empty until a stage answers
	return answered
}
