// Package proxyproto reads the PROXY protocol (versions 1 and 2, HAProxy's
// proxy-protocol.txt) that load balancers, nginx stream, hitch and
// HAProxy put before a connection's first byte to name the client they
// relay. NewListener wraps a net.Listener: connections from networks not
// in its allow list are closed before anything is read, the others must
// open with a valid header within a timeout or are closed too (the spec
// forbids guessing whether a header is there), and the accepted Conn
// reports the header's addresses as its own. TLS, when there is any,
// starts after the header.
//
// It owns the header's grammar and the accept-time check only: it must
// not import proxy, h2 or conf, and never looks at what follows the
// header.
package proxyproto
