package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
	"github.com/ramjet-proxy/ramjet/proxy/h2"
	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

// stageGuard runs the site's WAF on every request that may reach its
// upstream: misses, passes (POSTs, uploads, logged-in users), fragment
// misses. A fresh hit was answered by lookup and never gets here; a
// stale one was inspected there, before its refresh went upstream. In
// block mode a request the rules stop is answered here (the site's
// status and page; a fragment fails, showing its alt), in detect mode it
// goes on and is logged.
func stageGuard(r *request) verdict {
	if r.inline {
		return declined // lookup declined everything but fresh hits already
	}
	if r.inspect() {
		return proceed
	}
	return answered
}

// wafOutcome is what the WAF made of a request.
type wafOutcome uint8

const (
	wafNone     wafOutcome = iota // not inspected
	wafPassed                     // inspected, not stopped
	wafDetected                   // stopped by the rules, let go (detect mode)
	wafBlocked                    // stopped
)

func (o wafOutcome) String() string {
	switch o {
	case wafPassed:
		return "passed"
	case wafDetected:
		return "detected"
	case wafBlocked:
		return "blocked"
	}
	return "none"
}

// wafResult is the WAF's word on a request, for its log line.
type wafResult struct {
	done    bool
	outcome wafOutcome
	score   int
	rules   []int  // the rules that matched, in order
	data    string // what the gravest of them matched, cut
}

// inspect runs the WAF on the request once (lookup may have run it for a
// stale hit). It reports false when the request is stopped: r.res holds
// its answer.
func (r *request) inspect() bool {
	w := &r.s.WAF
	if r.waf.done || w.Mode == WAFOff || w.Rules == nil {
		return true
	}
	r.waf.done = true
	m := &r.p.metrics.waf
	switch {
	case inNets(w.Allow, r.client):
		m.allowed.Inc()
		return true
	case w.SkipStatic && r.s.files != nil && r.s.files.Static(r.req.URI().Path()):
		m.static.Inc()
		return true
	}
	in := waf.Request{Req: r.req, Client: r.client, ClientPort: int(r.port)}
	if r.frag != nil {
		return r.inspectFragment(&in)
	}
	in.Server = addrPort(r.ctx.LocalAddr())
	in.HTTP2 = h2.IsHTTP2(r.ctx)
	switch err := r.takeBody(w); {
	case errors.Is(err, errBodyUninspected):
		m.bodyUninspected.Inc()
	case err != nil:
		if errors.Is(err, fasthttp.ErrBodyTooLarge) {
			m.bodyRejected.Inc()
		}
		r.res.err = err // 413, or the client's body broke off
		return false
	default:
		in.Body = r.body.prefix
	}
	tx, v := w.Rules.Inspect(&in)
	if w.Rules.Rules().Responses {
		r.wafTx = tx // the response phases continue it
	} else {
		tx.Close() // nothing more to inspect: free it before the upstream's answer
	}
	return r.judge(&v)
}

// inspectFragment inspects a fragment's sub-request: the page's header
// fields with the fragment's target. A stopped fragment fails.
func (r *request) inspectFragment(in *waf.Request) bool {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	r.frag.withHeader(r.req, func(h *fasthttp.RequestHeader) { h.CopyTo(&req.Header) })
	req.Header.SetRequestURIBytes(r.req.Header.RequestURI())
	req.Header.SetMethodBytes(r.req.Header.Method())
	in.Req = req
	tx, v := r.s.WAF.Rules.Inspect(in)
	tx.Close()
	if !r.judge(&v) {
		r.res.err = ErrBlocked
		return false
	}
	return true
}

// ErrBlocked is a request (an ESI fragment's) the WAF stopped.
var ErrBlocked = errors.New("proxy: blocked by the WAF")

// judge counts, logs and remembers v, and says whether the request goes
// on; a stopped client request gets its answer.
func (r *request) judge(v *waf.Verdict) bool {
	m := &r.p.metrics.waf
	res := &r.waf
	res.score = v.Score
	for _, x := range v.Matches {
		res.rules = append(res.rules, x.ID)
	}
	if g := v.Gravest(); g != nil {
		res.data = g.Data
	}
	switch {
	case !v.Stop:
		res.outcome = wafPassed
		m.passed.Inc()
		if len(v.Matches) > 0 {
			r.p.log.Debug("waf: matched below the threshold", r.wafAttrs(v)...)
		}
		return true
	case r.s.WAF.Mode == WAFDetect:
		res.outcome = wafDetected
		m.detected.Inc()
		m.countRules(v, "detected")
		r.p.log.Info("waf: would block (detect mode)", r.wafAttrs(v)...)
		return true
	}
	res.outcome = wafBlocked
	m.blocked.Inc()
	m.countRules(v, "blocked")
	r.p.log.Warn("waf: blocked", r.wafAttrs(v)...)
	if r.ctx != nil {
		r.answerBlocked()
	}
	return false
}

// maxInspectedResponse bounds the response bodies the WAF reads (as
// Coraza's recommended SecResponseBodyLimit): a longer one, or one of
// unknown length, has only its status and header inspected.
const maxInspectedResponse = 512 << 10

// inspectResponse runs the response rules (CRS RESPONSE-95x) on the
// upstream's answer to the request the WAF inspected: status and header,
// and the body when it is of known length within maxInspectedResponse
// and not compressed (a streamed one is read into memory first). It
// reports false when the answer is stopped (block mode).
func (r *request) inspectResponse(resp *fasthttp.Response) bool {
	var body []byte
	if n := resp.Header.ContentLength(); n >= 0 && n <= maxInspectedResponse && len(resp.Header.ContentEncoding()) == 0 {
		body = resp.Body() // a stream of that length is read whole; relay and store take it from the buffer
	}
	v := r.wafTx.InspectResponse(resp, body)
	if len(v.Matches) == 0 && !v.Stop {
		return true
	}
	return r.judgeResponse(&v)
}

// judgeResponse is judge for a response verdict: a stopped answer in
// block mode is replaced by the site's block answer (respond writes it).
func (r *request) judgeResponse(v *waf.Verdict) bool {
	m := &r.p.metrics.waf
	res := &r.waf
	res.score = max(res.score, v.Score)
	for _, x := range v.Matches {
		res.rules = append(res.rules, x.ID)
	}
	if g := v.Gravest(); g != nil && res.data == "" {
		res.data = g.Data
	}
	switch {
	case !v.Stop:
		return true
	case r.s.WAF.Mode == WAFDetect:
		res.outcome = wafDetected
		m.responseDetected.Inc()
		m.countRules(v, "detected")
		r.p.log.Info("waf: would block the response (detect mode)", r.wafAttrs(v)...)
		return true
	}
	res.outcome = wafBlocked
	m.responseBlocked.Inc()
	m.countRules(v, "blocked")
	r.p.log.Warn("waf: blocked the response", r.wafAttrs(v)...)
	return false
}

// answerBlocked writes the site's block answer. A body left unread (one
// passed uninspected) is drained and the connection closed, as for 413.
func (r *request) answerBlocked() {
	ctx, w := r.ctx, &r.s.WAF
	if !r.body.whole && ctx.Request.IsBodyStream() {
		drain(ctx.RequestBodyStream(), ctx.Conn())
		ctx.SetConnectionClose()
	}
	ctx.Response.Reset()
	ctx.SetStatusCode(blockStatus(w.Status))
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(r.s.wafPage)
	r.res.written = true
}

func blockStatus(s int) int {
	if s == 0 {
		return fasthttp.StatusForbidden
	}
	return s
}

// defaultBlockPage is what a blocked request reads unless the site names
// a page of its own.
var defaultBlockPage = []byte("<!doctype html>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n<p>This request was blocked by the site's firewall.</p>\n")

func blockPage(p []byte) []byte {
	if len(p) == 0 {
		return defaultBlockPage
	}
	return p
}

// wafAttrs are a verdict's process log fields.
func (r *request) wafAttrs(v *waf.Verdict) []any {
	ids := make([]string, 0, len(v.Matches))
	for _, m := range v.Matches {
		ids = append(ids, strconv.Itoa(m.ID))
	}
	return []any{"site", siteName(r.s), "client", r.client.String(), "method", string(r.req.Header.Method()),
		"uri", string(r.req.Header.RequestURI()), "rules", strings.Join(ids, ","), "score", v.Score,
		"data", r.waf.data, "fragment", r.frag != nil}
}

func inNets(nets []netip.Prefix, a netip.Addr) bool {
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// requestBody is what the WAF read of a client's request body: the whole
// body, or (past the site's limit) its first bytes, which go upstream
// before the rest of the stream.
type requestBody struct {
	taken  bool
	whole  bool
	prefix []byte
	buf    *[]byte // pooled; nil when prefix is not pooled
}

var errBodyUninspected = errors.New("proxy: request body past the WAF's limit, passed uninspected")

// bodyBufs are the buffers small bodies are read into; larger ones are
// allocated for the request and dropped, so that the pool holds no
// upload-sized buffers.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// takeBody reads the request body up to the site's limit. A longer one
// is refused (413), or with BodyPass left to stream on uninspected
// (errBodyUninspected).
func (r *request) takeBody(w *WAF) error {
	ctx := r.ctx
	if !ctx.Request.IsBodyStream() {
		r.body = requestBody{taken: true, whole: true, prefix: ctx.Request.Body()}
		return nil
	}
	limit := w.BodyLimit
	if limit <= 0 {
		limit = 8 << 20
	}
	limit = min(limit, waf.MaxBody)
	if n := ctx.Request.Header.ContentLength(); int64(n) > limit {
		if w.BodyPass {
			return errBodyUninspected // nothing read: the stream goes on as it is
		}
		return fasthttp.ErrBodyTooLarge
	}
	r.body.taken = true
	bp := bodyBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	if n := ctx.Request.Header.ContentLength(); n > cap(buf) {
		bodyBufs.Put(bp)
		bp, buf = nil, make([]byte, 0, n)
	}
	buf, whole, err := readUpTo(ctx.RequestBodyStream(), buf, limit+1)
	r.body.prefix, r.body.buf, r.body.whole = buf, bp, whole
	if bp != nil {
		*bp = buf[:0] // grown: keep the larger buffer if it stays small
	}
	switch {
	case err != nil:
		return err
	case whole:
		return nil
	case w.BodyPass:
		return errBodyUninspected
	}
	return fasthttp.ErrBodyTooLarge
}

// readUpTo appends from rd to buf until EOF (whole) or n bytes.
func readUpTo(rd io.Reader, buf []byte, n int64) ([]byte, bool, error) {
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):min(int64(cap(buf)), n)]
		k, err := rd.Read(room)
		buf = buf[:len(buf)+k]
		if errors.Is(err, io.EOF) {
			return buf, true, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
	return buf, false, nil
}

// upstreamBody is the body a forwarded request sends: what the WAF read,
// then whatever of the stream it left; ok is false when it read nothing.
func (r *request) upstreamBody() (io.Reader, int, bool) {
	if !r.body.taken {
		return nil, 0, false
	}
	if r.body.whole {
		return bytes.NewReader(r.body.prefix), len(r.body.prefix), true
	}
	return io.MultiReader(bytes.NewReader(r.body.prefix), r.ctx.RequestBodyStream()), r.ctx.Request.Header.ContentLength(), true
}

// endWAF ends the request's WAF transaction and returns its body buffer.
func (r *request) endWAF() {
	if r.wafTx != nil {
		r.wafTx.Close()
		r.wafTx = nil
	}
	if r.body.buf != nil && cap(*r.body.buf) <= 1<<20 {
		bodyBufs.Put(r.body.buf)
	}
	r.body = requestBody{}
	r.waf = wafResult{rules: r.waf.rules[:0]}
	r.wafLog = accesslog.WAF{}
}
