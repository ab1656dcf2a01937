package h2

import (
	"context"
	"crypto/tls"
	"net"
)

// A TLS connection's HTTP/2 serving leaves fasthttp's worker goroutine
// for one of its own. The worker's stack grew for the TLS handshake, and
// a goroutine waiting under fasthttp's frames uses too much of it for the
// garbage collector to shrink it (it halves only stacks less than a
// quarter used, counting 800 bytes of slack): every idle connection
// would keep 8 KiB of stack. A goroutine that starts at serve and waits
// on the socket itself (idlewait.go) is shrunk to 4 KiB.

// tlsListener gives out its TLS connections as detachableConns.
type tlsListener struct{ net.Listener }

func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*tls.Conn); ok {
		return &detachableConn{Conn: tc}, err
	}
	return c, err
}

// detachableConn is a TLS connection fasthttp serves until ALPN chose
// h2; serveH2 then detaches it, and the Close of fasthttp's worker
// (which closes every connection whose handler returned) leaves it open
// for the goroutine serving it.
type detachableConn struct {
	*tls.Conn
	detached bool // set and read by fasthttp's worker only
}

func (c *detachableConn) Close() error {
	if c.detached {
		return nil
	}
	return c.Conn.Close()
}

// serveDetached serves the HTTP/2 connection c on a goroutine of its
// own, counted in s.serving for Shutdown, and closes c after.
func (s *Server) serveDetached(c *detachableConn) {
	c.detached = true
	s.serving.Add(1) // before fasthttp counts the connection closed: Shutdown waits for fasthttp first
	go func() {
		defer s.serving.Done()
		defer c.Conn.Close()
		s.serveConn(c.Conn, s.standin(c.Conn))
	}()
}

// waitServing waits for the detached connections' goroutines until ctx
// ends, then closes the connections left.
func (s *Server) waitServing(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.serving.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.closeH2Conns()
		return ctx.Err()
	}
}
