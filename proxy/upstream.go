package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net/textproto"
	"strconv"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// upstream answers what the cache cannot: the origin pool, or a site's
// docroot (static files and PHP) in front of it. A body in resp is either
// a stream or in resp's own buffer (never SetBodyRaw): the proxy hands
// that buffer to the client's response instead of copying it.
type upstream interface {
	// do answers req. client (nil: none) is the one request the answer
	// is for, which a docroot asks whether it is still there before it
	// runs a script that waited for a worker; a fill others may wait on
	// has none. htKey (0: none) is the client's docrootKey, under which
	// a docroot remembers its .htaccess evaluation.
	do(client phppool.Client, htKey uint64, req *fasthttp.Request, resp *fasthttp.Response) error
	// static reports whether a request for path is answered with a file
	// (never reaching PHP or the origin), for the WAF's SkipStatic.
	static(path []byte) bool
}

// originUpstream is the origin pool as the upstream of a proxied site.
type originUpstream struct{ pool *origin.Pool }

func (o originUpstream) do(_ phppool.Client, _ uint64, req *fasthttp.Request, resp *fasthttp.Response) error {
	return o.pool.Do(req, resp)
}

func (originUpstream) static([]byte) bool { return false }

// docrootUpstream is a docroot site's handler as its upstream.
type docrootUpstream struct{ h *docroot.Handler }

func (d docrootUpstream) do(client phppool.Client, htKey uint64, req *fasthttp.Request, resp *fasthttp.Response) error {
	return d.h.DoForKey(client, htKey, req, resp)
}

func (d docrootUpstream) static(path []byte) bool { return d.h.Static(path) }

// doUpstream sends req to the site's upstream with the fields ramjet sets
// for the site (setSiteFields); client and htKey as upstream.do takes them.
func doUpstream(s *site, client phppool.Client, htKey uint64, req *fasthttp.Request, resp *fasthttp.Response) error {
	setSiteFields(s, &req.Header)
	return s.up.do(client, htKey, req, resp)
}

// setSiteFields gives h the fields ramjet sets for the site, each the
// only line of its name, and removes a client's own: X-LSCACHE only as
// the site asks (a client's would switch the LiteSpeed Cache plugin on),
// the .htaccess rules' vary value only as stageRewrite set it (a forged
// "ismobile" would put a mobile page under the desktop key).
func setSiteFields(s *site, h *fasthttp.RequestHeader) {
	if s.LSCacheHeader {
		replaceField(h, hdrLSCache, lscacheOn)
	} else {
		removeField(h, hdrLSCache)
	}
	if s.ht == nil {
		removeField(h, HeaderVaryValue)
	}
	// Edge Architecture: what this surrogate can do, so an application
	// may target Surrogate-Control at it and send ESI only when on.
	if s.ESI {
		replaceField(h, hdrCapability, capabilityESI)
	} else {
		replaceField(h, hdrCapability, capabilityPlain)
	}
}

// upstreamRequest is the request a fill of r sends upstream: the client's
// request as newUpstreamRequest makes it, a fragment's sub-request, or a
// warm fetch's made-up request, for the target its key describes.
func (r *request) upstreamRequest() *fasthttp.Request {
	var req *fasthttp.Request
	switch r.kind {
	case kindFragment:
		req = r.frag.upstreamRequest(r.req)
	case kindWarm:
		req = r.madeUpUpstreamRequest()
	default:
		req = r.newUpstreamRequest(true, 0)
	}
	req.SetRequestURIBytes(r.keyTarget())
	pinURI(req) // the key's target may start with "//" too
	return req
}

var (
	capabilityESI   = []byte(policy.Device + `="Surrogate/1.0 ESI/1.0"`)
	capabilityPlain = []byte(policy.Device + `="Surrogate/1.0"`)
	lscacheOn       = []byte("on")
)

// hopByHop headers concern one connection and never cross the proxy.
var hopByHop = [...]string{
	"Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer",
	"Transfer-Encoding", "Upgrade", "Proxy-Authorization", "Proxy-Authenticate",
}

// fillOnly are dropped from a request that may fill the cache: the cache
// wants the whole identity body, and answers validators, ranges and
// encodings itself. A fill sends no body (a request with one is passed,
// stageIdentity), so it sends no Content-Length either: one copied from
// the client's request (a fragment's: its page's, a POST's) would have
// the origin wait for a body that never comes, and every request
// coalesced on the fill with it (Transfer-Encoding is hop-by-hop).
var fillOnly = []string{
	"Accept-Encoding", "If-None-Match", "If-Modified-Since", "If-Match",
	"If-Unmodified-Since", "If-Range", "Range", "Content-Length",
}

// newUpstreamRequest copies the client's request for the origin: Host and
// target as admit settled them, hop-by-hop headers dropped (also those
// named in Connection), X-Forwarded-* set, the body streamed. A fill asks for GET even for HEAD,
// so the stored entry can answer both. A docroot site also learns the
// connection's ports and addresses for PHP.
func (r *request) newUpstreamRequest(fill bool, bodyLimit int64) *fasthttp.Request {
	ctx, s := r.ctx, r.s
	req := fasthttp.AcquireRequest()
	copyClientHeader(&ctx.Request.Header, &req.Header)
	req.Header.SetHostBytes(ctx.Request.Header.Host()) // as admit settled it, not as the raw lines say
	req.SetRequestURIBytes(ctx.Request.Header.RequestURI())
	pinURI(req)
	stripHopByHop(&req.Header, &ctx.Request.Header)
	r.setForwarded(&req.Header)
	if s.Docroot != nil {
		r.setConnection(&req.Header)
	}
	if fill {
		for _, h := range fillOnly {
			req.Header.Del(h)
		}
		req.Header.SetMethod(fasthttp.MethodGet)
		return req
	}
	if s.ESI {
		// The answer may be an ESI page to assemble: ask only for codings
		// ramjet can undo.
		keepDecodableCodings(&req.Header)
	}
	if r.body.whole && s.Docroot != nil && (bodyLimit <= 0 || int64(len(r.body.prefix)) <= bodyLimit) {
		// PHP reads the very buffer the WAF inspected: no stream, so the
		// docroot need not buffer it again before taking a worker.
		req.SetBodyRaw(r.body.prefix)
		return req
	}
	if body, n, ok := r.upstreamBody(); ok { // read (in part) by the WAF
		if bodyLimit > 0 {
			body = &limitedBody{r: body, left: bodyLimit}
		}
		req.SetBodyStream(body, n)
		return req
	}
	switch {
	case ctx.Request.IsBodyStream():
		var body io.Reader = ctx.RequestBodyStream()
		if bodyLimit > 0 {
			body = &limitedBody{r: body, left: bodyLimit}
		}
		req.SetBodyStream(body, ctx.Request.Header.ContentLength())
	case len(ctx.Request.Body()) > 0:
		req.SetBodyRaw(ctx.Request.Body())
	}
	return req
}

// copyClientHeader copies the client's request header for the upstream.
// Once ramjet has read the cookies (bypass, identity, vary), fasthttp
// writes them re-serialised ("a=1;b=2" becomes "a=1; b=2"), so a header
// that came with cookies is parsed again from the bytes the client sent:
// the origin and PHP get them byte for byte. HTTP/2 requests have no such
// bytes (their fields were decoded) and are copied.
func copyClientHeader(src, dst *fasthttp.RequestHeader) {
	raw := src.RawHeaders()
	if len(raw) == 0 || !hasField(raw, "cookie") {
		src.CopyTo(dst)
		return
	}
	b := rawHeaderBufs.Get().(*rawHeaderBuf)
	defer rawHeaderBufs.Put(b)
	b.buf = append(append(append(append(b.buf[:0], src.Method()...), " / HTTP/1.1\r\n"...), raw...), "\r\n"...)
	b.rd.Reset(b.buf)
	b.br.Reset(&b.rd)
	if err := dst.Read(&b.br); err != nil {
		src.CopyTo(dst) // what fasthttp parsed once parses again; a failure only costs the bytes
	}
}

type rawHeaderBuf struct {
	buf []byte
	rd  bytes.Reader
	br  bufio.Reader
}

var rawHeaderBufs = sync.Pool{New: func() any {
	b := &rawHeaderBuf{}
	b.br = *bufio.NewReaderSize(nil, 16<<10) // the default max_header_bytes; a larger header is copied
	return b
}}

// stripHopByHop removes from h, a copy of the client's request header
// from, the hop-by-hop fields and those from's Connection lines name (but
// keptFields: connection.go).
func stripHopByHop(h, from *fasthttp.RequestHeader) {
	forListed(from, h.DelBytes)
	// Look before deleting (usually none is there): Del normalises its
	// name and scans every header each call, a Peek of the stored
	// (canonical) form only scans. Not h.All: it would parse the cookies
	// and have them written back re-serialised.
	for i, name := range hopByHop {
		if len(peekCanonical(h, hopByHopCanonical[i])) > 0 {
			h.Del(name)
		}
	}
	h.ResetConnectionClose()
}

// hopByHopCanonical are hopByHop's names as fasthttp stores them ("Te").
var hopByHopCanonical = func() (out [len(hopByHop)]string) {
	for i, name := range hopByHop {
		out[i] = textproto.CanonicalMIMEHeaderKey(name)
	}
	return out
}()

// setConnection tells a docroot the client's port and the address it
// connected to (REMOTE_PORT, SERVER_ADDR), after setForwarded removed
// whatever the client sent under those names; empty when unknown (a
// client a trusted proxy named, a listener that is not TCP).
func (r *request) setConnection(h *fasthttp.RequestHeader) {
	ctx := r.ctx
	var port, addr [48]byte
	var p, a []byte
	if r.port != 0 {
		p = strconv.AppendInt(port[:0], int64(r.port), 10)
	}
	if ap := addrPort(ctx.LocalAddr()); ap.IsValid() {
		a = ap.Addr().Unmap().AppendTo(addr[:0])
	}
	h.SetBytesV(docroot.HeaderRemotePort, p)
	h.SetBytesV(docroot.HeaderServerAddr, a)
}

// limitedBody fails a streamed request body that grows past the limit, so
// the exchange ends with fasthttp.ErrBodyTooLarge (413).
type limitedBody struct {
	r    io.Reader
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, fasthttp.ErrBodyTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, fasthttp.ErrBodyTooLarge
	}
	return n, err
}

var (
	_ upstream = originUpstream{}
	_ upstream = docrootUpstream{}
)
