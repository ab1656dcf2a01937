// Package streamctx holds what the transports tell a request, and what
// the servers of the multiplexed protocols (proxy/h2, proxy/h3) share
// about serving one stream as a fasthttp.RequestCtx.
//
// Transport is the one protocol view: the request asks it once
// (TransportOf) for its protocol, whose TLS it came over and how to send
// an interim response, instead of telling connection types apart. The
// stand-in connections of h2 and h3 streams implement it, and h2's
// HTTP/1.1 connection from a TLS terminator; any other connection is
// HTTP/1.1 of fasthttp's own (HTTP1Conn).
//
// What h2 and h3 share: the pooled contexts (which h1's lane takes its
// HTTP/1.1 hits' from too), the stand-in connection,
// the fields of a response as both send them (Fields: which belong to
// an HTTP/1.1 connection, the length fasthttp would announce, Server,
// one Date per second), the workers streams run on, and fasthttp's log
// messages sent to slog. It knows no protocol's framing and must not
// import proxy, h2 or h3.
package streamctx
