// Package h2 serves a fasthttp.RequestHandler over HTTP/1.1 and HTTP/2 on
// one listener. Over TLS, ALPN splits the connections: fasthttp serves
// http/1.1 itself and hands "h2" to this package's own HTTP/2 server
// (conn.go), which uses golang.org/x/net/http2 only for its Framer and
// HPACK. A plain listener can also take h2c with prior knowledge, told
// apart from HTTP/1.1 by the client preface.
//
// One goroutine per connection reads the frames and builds a pooled
// fasthttp.RequestCtx per stream straight from the decoded header
// fields. A request that Config.Inline can answer without blocking (a
// cache hit) is answered on that goroutine; the others run the handler
// on a pooled worker goroutine, bodies streamed both ways under HTTP/2
// flow control. Responses are HPACK-encoded into one output buffer per
// connection, written when the reader runs out of frames: the answers
// to a batch of requests leave in one TLS write. A connection waiting
// for its client with nothing buffered holds no read buffer, and a TLS
// one waits on a goroutine of its own (not fasthttp's, whose stack grew
// for the handshake) polling the socket itself, so that the garbage
// collector shrinks its stack to 4 KiB (detach.go, idlewait.go).
//
// Connections are counted and limited by package conns before their TLS
// handshake or h2c sniffing, as the plain listener's are. On a plain
// listener with Config.Park, an idle HTTP/1.1 connection is parked by
// conns as the main listener's (ConnState): woken, it is sorted
// again like a new one; a large body goes out with its head in one
// writev through the sniffer's wrapper (replayConn.WriteBody).
//
// It owns listeners and connections, not certificates (package certs
// makes the tls.Config) and not request handling: it must not import
// proxy, conf or certs, and the handler tells HTTP/2 from HTTP/1.1, a
// terminator's TLS from its own, and sends interim responses only
// through streamctx.TransportOf: a stream's stand-in connection
// implements it, and so does an HTTP/1.1 connection from a TLS
// terminator (terminatedConn).
package h2
