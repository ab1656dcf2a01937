// Package streamctx holds what the servers of the multiplexed protocols
// (proxy/h2, proxy/h3) share about serving one stream as a
// fasthttp.RequestCtx: the pooled contexts, the rules that turn a
// fasthttp.Response into HTTP/2 or HTTP/3 fields (the length fasthttp
// would announce, which fields belong to an HTTP/1.1 connection), and
// fasthttp's log messages sent to slog. It knows no protocol's framing
// and must not import proxy, h2 or h3.
package streamctx
