package waf

import (
	"bytes"
	"net/netip"
	"strconv"
	"strings"

	"github.com/corazawaf/coraza/v3/types"
	"github.com/valyala/fasthttp"
)

// Request is what is inspected of one request.
type Request struct {
	// Req holds the method, target, protocol and header fields, as the
	// client sent them (an HTTP/2 request's pseudo-header fields are its
	// method, target and Host).
	Req *fasthttp.Request
	// Client is the client's address as the proxy settled it (real_ip,
	// the PROXY protocol): REMOTE_ADDR to the rules. ClientPort is 0 when
	// unknown.
	Client     netip.Addr
	ClientPort int
	Server     netip.AddrPort // where the client connected; SERVER_ADDR
	// Protocol is REQUEST_PROTOCOL for a request that came without a
	// request line ("HTTP/2.0", "HTTP/3.0", as ModSecurity names them);
	// empty: the request line's (HTTP/1.0 or HTTP/1.1).
	Protocol string
	// Body is the whole request body, to be inspected; nil when there is
	// none or it is not to be inspected (past the site's limit).
	Body []byte
}

// Verdict is the outcome of one inspection.
type Verdict struct {
	// Stop: a rule interrupted the transaction (deny, drop, redirect):
	// the request (or response) is not to go on in block mode.
	Stop bool
	// Status is the status the interrupting rule named; 0 when none.
	Status int
	// RuleID is the rule that interrupted, or 0.
	RuleID int
	// Score is the CRS anomaly score the blocking evaluation saw (inbound
	// for a request, outbound for a response); 0 when it did not run to
	// a block.
	Score int
	// Matches are the rules that matched and log, in order.
	Matches []Match
}

// Match is one rule that matched.
type Match struct {
	ID      int
	Message string
	// Severity is the rule's, 0 (emergency) to 7 (debug); -1 when unset.
	Severity int
	// Data is what matched, "VARIABLE:key=value", cut to MaxData bytes.
	Data string
}

// MaxData bounds Match.Data: a match's value may be a whole body.
const MaxData = 120

// Anomaly evaluation rules of the CRS: they stop a transaction whose
// score reached the threshold, and carry the score in their message.
const (
	ruleInboundEvaluation  = 949110
	ruleOutboundEvaluation = 959100
)

// Tx is one request's transaction: Inspect began it, InspectResponse
// may continue it, Close ends it. It is not safe for concurrent use.
type Tx struct {
	tx   types.Transaction
	seen int // matched rules already reported
}

// Inspect runs the request phases (headers, then body) on in.
func (s *Set) Inspect(in *Request) (*Tx, Verdict) {
	t := &Tx{tx: s.waf.NewTransaction()}
	return t, t.request(in)
}

func (t *Tx) request(in *Request) Verdict {
	tx, h := t.tx, &in.Req.Header
	tx.ProcessConnection(in.Client.String(), in.ClientPort, in.Server.Addr().String(), int(in.Server.Port()))
	proto := in.Protocol
	if proto == "" {
		proto = string(h.Protocol())
	}
	tx.ProcessURI(string(h.RequestURI()), string(h.Method()), proto)
	host := h.Host()
	if i := bytes.LastIndexByte(host, ':'); i >= 0 && !bytes.HasSuffix(host, []byte("]")) {
		host = host[:i]
	}
	tx.SetServerName(string(host))
	forEachField(h, func(k, v []byte) { tx.AddRequestHeader(string(k), string(v)) })
	if it := tx.ProcessRequestHeaders(); it != nil {
		return t.verdict(it, ruleInboundEvaluation)
	}
	if len(in.Body) > 0 && tx.IsRequestBodyAccessible() {
		if it, _, err := tx.WriteRequestBody(in.Body); err != nil || it != nil {
			return t.verdict(it, ruleInboundEvaluation)
		}
	}
	it, _ := tx.ProcessRequestBody() // its errors are REQBODY_ERROR, which the rules judge
	return t.verdict(it, ruleInboundEvaluation)
}

// forEachField calls f for each header field: as the client sent them
// when the header came as bytes (HTTP/1.1: order, repeated fields and
// cookies untouched), else as fasthttp holds them (HTTP/2, whose Host
// is its :authority).
func forEachField(h *fasthttp.RequestHeader, f func(k, v []byte)) {
	if len(h.RawHeaders()) == 0 {
		for k, v := range h.All() {
			f(k, v)
		}
		return
	}
	for k, v := range h.AllInOrder() {
		f(k, v)
	}
}

// Body is what the caller has of a response body for the rules.
type Body struct {
	// Data is the body (nil: nothing to inspect).
	Data []byte
	// Decoded: Data is the identity body of a response that came
	// compressed. The rules then see the header without its
	// Content-Encoding and Content-Length, as the CRS's response rules
	// skip a coded body they cannot read.
	Decoded bool
}

// InspectResponse runs the response phases on the upstream's answer:
// the header fields, then the body. Only sets compiled with Responses
// inspect bodies; every set sees the status and header.
func (t *Tx) InspectResponse(resp *fasthttp.Response, body Body) Verdict {
	tx := t.tx
	if tx.IsInterrupted() {
		return Verdict{}
	}
	for k, v := range resp.Header.All() {
		if body.Decoded && (bytesFold(k, "Content-Encoding") || bytesFold(k, "Content-Length")) {
			continue
		}
		tx.AddResponseHeader(string(k), string(v))
	}
	if it := tx.ProcessResponseHeaders(resp.StatusCode(), "HTTP/1.1"); it != nil {
		return t.verdict(it, ruleOutboundEvaluation)
	}
	if len(body.Data) > 0 && tx.IsResponseBodyAccessible() && tx.IsResponseBodyProcessable() {
		if it, _, err := tx.WriteResponseBody(body.Data); err != nil || it != nil {
			return t.verdict(it, ruleOutboundEvaluation)
		}
	}
	it, _ := tx.ProcessResponseBody() // an error leaves the response as it is
	return t.verdict(it, ruleOutboundEvaluation)
}

// Close ends the transaction (it removes any upload it spooled).
func (t *Tx) Close() {
	_ = t.tx.Close() // only temporary files' removal fails, and nothing is left to do about it
}

// verdict is the outcome so far: the interruption it, and the rules that
// matched since the last verdict.
func (t *Tx) verdict(it *types.Interruption, evaluation int) Verdict {
	var v Verdict
	if it != nil {
		v.Stop, v.Status, v.RuleID = true, it.Status, it.RuleID
	}
	all := t.tx.MatchedRules()
	for _, m := range all[min(t.seen, len(all)):] {
		r := m.Rule()
		if r.ID() == evaluation {
			v.Score = scoreOf(m.Message())
			continue // the sum of the matches, not one
		}
		if r.Severity() == types.RuleSeverityUnset && r.ID() != v.RuleID {
			continue // setup and flow-control rules: nothing to tell
		}
		v.Matches = append(v.Matches, Match{ID: r.ID(), Message: m.Message(), Severity: r.Severity().Int(),
			Data: dataOf(m.MatchedDatas())})
	}
	t.seen = len(all)
	return v
}

// Gravest is the match of the gravest severity (the first of them), or
// nil: what a log line shows of a verdict.
func (v *Verdict) Gravest() *Match {
	var g *Match
	for i := range v.Matches {
		m := &v.Matches[i]
		if g == nil || m.Severity >= 0 && (g.Severity < 0 || m.Severity < g.Severity) {
			g = m
		}
	}
	return g
}

// scoreOf reads "… (Total Score: 10)" from an evaluation rule's message.
func scoreOf(msg string) int {
	_, s, ok := strings.Cut(msg, "Total Score: ")
	if !ok {
		return 0
	}
	end := 0
	for end < len(s) && '0' <= s[end] && s[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(s[:end]) // digits only; an empty string is 0
	return n
}

// dataOf is the value that decided the match (a chain's deepest link),
// named by its variable and key.
func dataOf(mds []types.MatchData) string {
	if len(mds) == 0 {
		return ""
	}
	md := mds[0]
	for _, m := range mds[1:] {
		if m.ChainLevel() > md.ChainLevel() {
			md = m // a chain's last link is what decided
		}
	}
	var b strings.Builder
	b.WriteString(md.Variable().Name())
	if k := md.Key(); k != "" {
		b.WriteByte(':')
		b.WriteString(k)
	}
	b.WriteByte('=')
	b.WriteString(md.Value())
	return cut(b.String(), MaxData)
}

// cut shortens s to at most n bytes, not inside a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

func bytesFold(b []byte, s string) bool {
	return len(b) == len(s) && strings.EqualFold(string(b), s)
}
