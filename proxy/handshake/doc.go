// Package handshake serves listeners whose connections need a short
// exchange before the server may have them: sorting h2c from HTTP/1.1 by
// the first bytes, reading a PROXY protocol header. Each accepted
// connection is prepared on a goroutine of its own, never in the accept
// loop, so a silent peer holds up nobody else, and Accept hands out only
// the prepared ones.
//
// It owns that goroutine per connection and its end: it knows nothing of
// what is read, and must not import proxy, h2 or proxyproto.
package handshake
