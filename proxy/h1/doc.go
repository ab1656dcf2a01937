// Package h1 serves the HTTP/1.1 connections of a plain listener: it
// answers what its Inline function answers at once (a fresh cache hit)
// itself, on the connection's goroutine and from state pooled per
// request, and hands everything else to fasthttp's Server from the
// request's first byte.
//
// Why: under 1,000 busy connections fasthttp's per-connection serving
// (its request context and buffers, kept per connection) costs more than
// the hit it serves, because that state is out of the CPU's cache by the
// time the connection's next request comes (docs/performance.md, "The
// floor"). Here a connection waiting for its next request holds no
// buffer and no context; when the request comes, the ones the last
// request gave back are taken, still in the cache.
//
// What it owns: the loop of a connection between fasthttp's services
// (conns.Conn yields it back between requests, Config.Yield), parsing a
// request head with fasthttp's parser, deciding which requests it may
// answer itself (GET or HEAD over HTTP/1.1, no body, no Expect, no
// Upgrade, the connection kept open), and writing their answers as
// fasthttp writes them (its Server field, HEAD without a body, the write
// deadline, Connection: close). Anything else, a head split across
// reads or one it cannot parse included, is fasthttp's, which then
// answers exactly as it did without this package. The request path is
// Inline's (proxy.ServeHit): this package knows nothing of caching.
//
// It must not import proxy.
package h1
