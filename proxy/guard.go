package proxy

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

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
	case w.SkipStatic && r.s.up.static(r.req.URI().Path()):
		m.static.Inc()
		return true
	}
	in := waf.Request{Req: r.req, Client: r.client, ClientPort: int(r.port)}
	if r.kind == kindFragment {
		return r.inspectFragment(&in) // no body, no connection: its page's header
	}
	in.Server = addrPort(r.ctx.LocalAddr())
	in.Protocol = r.via.Protocol().Version()
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
	if !r.judge(&v, false) {
		r.answerBlocked()
		return false
	}
	return true
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
	if !r.judge(&v, false) {
		r.res.err = ErrBlocked
		return false
	}
	return true
}

// ErrBlocked is a request (an ESI fragment's) the WAF stopped.
var ErrBlocked = errors.New("proxy: blocked by the WAF")

// judge counts, logs and remembers v, a verdict on the request or (the
// response phases) on its upstream's answer, and says whether the
// request goes on. A stopped client request gets its answer from
// inspect; a stopped response is replaced by that answer when respond
// writes it.
func (r *request) judge(v *waf.Verdict, response bool) bool {
	m := &r.p.metrics.waf
	res := &r.waf
	res.score = max(res.score, v.Score)
	for _, x := range v.Matches {
		res.rules = append(res.rules, x.ID)
	}
	if g := v.Gravest(); g != nil && res.data == "" {
		res.data = g.Data
	}
	side := m.side(response)
	switch {
	case !v.Stop && response:
		return true
	case !v.Stop:
		res.outcome = wafPassed
		m.passed.Inc()
		if len(v.Matches) > 0 {
			r.p.log.Debug("waf: matched below the threshold", r.wafAttrs(v)...)
		}
		return true
	case r.s.WAF.Mode == WAFDetect:
		res.outcome = wafDetected
		side.detected.Inc()
		r.s.state.wafDetected.Inc()
		m.countRules(v, "detected")
		r.p.log.Info(side.detectMsg, r.wafAttrs(v)...)
		return true
	}
	res.outcome = wafBlocked
	side.blocked.Inc()
	r.s.state.wafBlocked.Inc()
	m.countRules(v, "blocked")
	r.p.log.Warn(side.blockMsg, r.wafAttrs(v)...)
	return false
}

// wafSide is what differs between a verdict on a request and one on its
// response: the counters and the log lines.
type wafSide struct {
	detected, blocked   *metrics.Counter
	detectMsg, blockMsg string
}

func (m *wafMetrics) side(response bool) wafSide {
	if response {
		return wafSide{m.responseDetected, m.responseBlocked,
			"waf: would block the response (detect mode)", "waf: blocked the response"}
	}
	return wafSide{m.detected, m.blocked, "waf: would block (detect mode)", "waf: blocked"}
}

// maxInspectedResponse bounds the response bodies the WAF reads (as
// Coraza's recommended SecResponseBodyLimit): a longer one, or one of
// unknown length, has only its status and header inspected.
const maxInspectedResponse = 512 << 10

// inspectResponse runs the response rules (CRS RESPONSE-95x) on the
// upstream's answer to the request the WAF inspected: status and header,
// and the body when it is of known length within maxInspectedResponse (a
// streamed one is read into memory first), decoded when the upstream
// compressed it and it decodes within that bound too. It reports false
// when the answer is stopped (block mode).
func (r *request) inspectResponse(resp *fasthttp.Response) bool {
	var body waf.Body
	if n := resp.Header.ContentLength(); n >= 0 && n <= maxInspectedResponse {
		body.Data = resp.Body() // a stream of that length is read whole; relay and store take it from the buffer
		if ce := resp.Header.ContentEncoding(); len(ce) > 0 {
			// What the rules look for is in the identity body; one that
			// does not decode (unknown coding, larger than the bound) has
			// only its header inspected, as a long one.
			d, err := decodeBody(body.Data, ce, maxInspectedResponse)
			body = waf.Body{Data: d, Decoded: err == nil}
		}
	}
	v := r.wafTx.InspectResponse(resp, body)
	if len(v.Matches) == 0 && !v.Stop {
		return true
	}
	return r.judge(&v, true)
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
		"data", r.waf.data, "fragment", r.kind == kindFragment}
}

func inNets(nets []netip.Prefix, a netip.Addr) bool {
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// wafPart is what the WAF made of the request (stageGuard, or lookup
// for a stale hit): its word for the log line, the transaction a
// response inspection continues (nil unless the site inspects
// responses), and the body it read.
type wafPart struct {
	waf   wafResult
	wafTx *waf.Tx
	body  requestBody
}

// endWAF ends the request's WAF transaction and returns its body buffer;
// release calls it before reset, which lets go of the rest.
func (w *wafPart) endWAF() {
	if w.wafTx != nil {
		w.wafTx.Close()
		w.wafTx = nil
	}
	if w.body.buf != nil && cap(*w.body.buf) <= 1<<20 {
		bodyBufs.Put(w.body.buf)
	}
}

func (w *wafPart) reset() {
	w.waf.done, w.waf.outcome, w.waf.score, w.waf.data = false, 0, 0, ""
	w.waf.rules = w.waf.rules[:0]
	w.wafTx = nil
	w.body.taken, w.body.whole, w.body.prefix, w.body.buf = false, false, nil, nil
}
