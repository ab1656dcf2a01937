package proxy

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/h2"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
)

// passInterim gives the client whose request went upstream the interim
// responses the origin sent before resp (103 Early Hints above all),
// ahead of the answer; they are never stored. Only the request that
// fetched sees them: those coalesced onto its fill, and hits later, get
// the final answer only. Over HTTP/2 any 1xx but 101 goes on as an
// interim HEADERS frame; over HTTP/1.1, a 103's Link fields, as fasthttp's
// RequestCtx.EarlyHints writes them (it sends nothing to HTTP/1.0
// clients, RFC 9110 15.2), and no other 1xx: a 100 Continue answered the
// origin's own Expect, a 102 is obsolete.
//
// fasthttp's client reads interim responses inside Do and drops them, so
// ramjet takes them from the connection (origin.Interims) when Do
// returns, that is once the final response's header has arrived: the
// hints reach the client just before the answer, not while the origin
// is still working on it.
func passInterim(ctx *fasthttp.RequestCtx, resp *fasthttp.Response) {
	if ctx == nil {
		return
	}
	for _, im := range origin.Interims(resp) {
		switch {
		case h2.IsHTTP2(ctx):
			h2.SendInterim(ctx, im.Status, im.Fields)
		case im.Status == fasthttp.StatusEarlyHints:
			earlyHints(ctx, im.Fields)
		}
	}
}

// earlyHints writes a 103 with the Link fields over HTTP/1.1. The
// client's response holds nothing yet (the answer is written after the
// fill), so the Link fields put there for EarlyHints are taken out again.
func earlyHints(ctx *fasthttp.RequestCtx, fields [][2][]byte) {
	h := &ctx.Response.Header
	links := false
	for _, f := range fields {
		if bytes.EqualFold(f[0], []byte("Link")) {
			h.AddBytesV("Link", f[1])
			links = true
		}
	}
	if !links {
		return
	}
	_ = ctx.EarlyHints() // a client gone shows when the answer is written
	h.Del("Link")
}
