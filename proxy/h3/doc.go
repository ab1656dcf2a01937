// Package h3 serves a fasthttp.RequestHandler over HTTP/3 (RFC 9114) on
// a UDP socket, on quic-go's QUIC transport. It owns the HTTP/3 layer
// itself — control streams, SETTINGS, GOAWAY, request framing and a
// static-table QPACK that decodes into fasthttp's request header and
// encodes from its response header without allocating — so that an
// HTTP/3 stream reaches the handler as the same pooled
// fasthttp.RequestCtx an HTTP/1.1 request or an HTTP/2 stream does, and
// every stage of the proxy's pipeline applies to it unchanged.
//
// Each request stream runs on a goroutine of its own (quic-go's streams
// block per stream, there is no connection reader to keep free), taken
// from the stream workers the process's HTTP/2 streams use too
// (streamctx.Shared), whose stacks have grown serving earlier streams:
// headers, the 0-RTT check, the handler, the response. Request bodies
// stream to the handler from DATA frames; response bodies leave in one
// write when small, from where they lie when large, one DATA frame per
// read when streamed. 0-RTT requests are served early only for GET and
// HEAD without a body; any other waits for the handshake to complete
// (replay protection, RFC 9114 §10.9, RFC 8470).
//
// It owns the socket, the connections and their goroutines, not the
// certificates (package certs gives the tls.Config) and not request
// handling: it must not import proxy, conf or certs, and the handler
// tells HTTP/3 apart and sends interim responses (a HEADERS frame of
// their own ahead of the answer's) only through streamctx.TransportOf,
// which each stream's stand-in connection implements.
package h3
