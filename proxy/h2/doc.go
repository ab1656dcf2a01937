// Package h2 serves a fasthttp.RequestHandler over HTTP/1.1 and HTTP/2 on
// one listener. Over TLS, ALPN splits the connections: fasthttp serves
// http/1.1 itself and hands "h2" to golang.org/x/net/http2, whose streams
// are bridged back into the same handler, one fasthttp.RequestCtx per
// stream, bodies streamed both ways. A plain listener can also take h2c
// with prior knowledge, told apart from HTTP/1.1 by the client preface.
// x/net/http2 writes to a coalescingConn, which gathers the frames of
// all of a connection's streams into one TLS write (one record and
// system call while under 16 KiB) instead of one or two per response.
//
// It owns listeners and connections, not certificates (package certs
// makes the tls.Config) and not request handling: it must not import
// proxy, conf or certs, and the handler cannot tell HTTP/2 from HTTP/1.1
// except through IsHTTP2.
package h2
