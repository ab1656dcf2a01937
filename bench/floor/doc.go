// Command floor is the least a Go server must do to answer a cached GET:
// the ceiling of a serving model, measured against nginx side by side with
// ramjet. bench/run starts it in ramjet's place:
//
//	go build -o /tmp/floor ./bench/floor
//	FLOOR_MODE=gor BENCH_RAMJET_BIN=/tmp/floor BENCH_ONLY="ramjet fcgi tail" \
//		BENCH_PAGES=725 bench/run --quick --out /tmp/x.md
//
// It takes ramjet's command line loosely: `floor serve --listen ADDR
// --origin URL` (any other flag ignored) and `floor version`. The first
// GET of a path fetches ORIGIN+path once and keeps its body and type in
// memory; every answer after that is a 200 with the header set of a
// ramjet hit (Cache-Status: ramjet; hit, a fixed Date) and the origin's
// body byte for byte, so that the harness's hit check passes. A fetch
// that fails is answered 502 and tried again on the next request.
//
// FLOOR_MODE picks the serving model:
//
//   - gor (the default): a goroutine per connection, reading and writing
//     with raw system calls through the connection's RawConn and waiting
//     in Go's netpoller (internal/rawsock, as ramjet's connections do).
//   - evl: one edge-triggered epoll loop on one goroutine, as nginx's
//     worker.
//   - fh: fasthttp's Server with a handler that only sets the page's
//     headers and body, configured as ramjet configures it.
//   - own: fh's handler in a loop of its own, a goroutine per connection
//     as gor, with fasthttp's request parser, request context and
//     response writer, all taken from a pool once the connection is
//     readable and given back after the answer (as proxy/h1's lane).
//   - ownheld: own with that state kept per connection for its life, as
//     fasthttp's Server keeps it.
//
// FLOOR_SENDFILE=1 (gor and evl) sends a body of 16 KiB or more from an
// unlinked temporary file: the head with MSG_MORE, then sendfile, as
// ramjet's disk tier sends a hit.
//
// It owns only its page store (page.go), request splitting and answers
// (answer.go) and the serving loops (gor.go, evl.go, fh.go, own.go). It is a
// measurement tool: ramjet does not use it, and it has none of a proxy's
// duties (no expiry, no Host, no request bodies: any method but GET is
// refused and the connection closed).
package main
