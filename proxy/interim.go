package proxy

import (
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/origin"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// passInterim gives the client whose request went upstream the interim
// responses the origin sent before resp (103 Early Hints above all),
// ahead of the answer; they are never stored. Only the request that
// fetched sees them: those coalesced onto its fill, and hits later, get
// the final answer only. The client's transport sends them as its
// protocol can (streamctx.Transport): over HTTP/2 and HTTP/3 any 1xx but
// 101 as an interim HEADERS frame, over HTTP/1.1 a 103's Link fields
// only (nothing to an HTTP/1.0 client).
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
	ims := origin.Interims(resp)
	if len(ims) == 0 {
		return
	}
	via := streamctx.TransportOf(ctx)
	for _, im := range ims {
		via.SendInterim(ctx, im.Status, im.Fields) // a client gone shows when the answer is written
	}
}
