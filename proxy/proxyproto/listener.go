package proxyproto

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/handshake"
)

// ErrNotAllowed: the connection came from a network not in Config.Allow.
var ErrNotAllowed = errors.New("proxyproto: peer not allowed to send PROXY headers")

// Config is a listener that expects a PROXY header on every connection.
type Config struct {
	// Allow are the networks the balancers connect from. A connection
	// from anywhere else is closed before anything is read: nothing that
	// can reach the listener directly may name its own address. Empty
	// refuses every connection.
	Allow []netip.Prefix
	// Timeout bounds reading the header (the spec asks for at least 3 s,
	// a TCP retransmit). 0 means 5 s.
	Timeout time.Duration
	// Refused, when set, is told of every connection closed and why: an
	// error wrapping ErrNotAllowed, ErrNoHeader, ErrMalformed, or the
	// read's (a timeout, the peer leaving).
	Refused func(remote net.Addr, err error)
}

func (c *Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return 5 * time.Second
	}
	return c.Timeout
}

func (c *Config) allowed(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := t.AddrPort().Addr().Unmap()
	for _, p := range c.Allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// NewListener wraps ln: Accept hands out only the connections from an
// allowed network whose header was read, each on a goroutine of its own
// (package handshake), never in the accept loop.
func NewListener(ln net.Listener, cfg Config) net.Listener {
	return handshake.NewListener(ln, func(c net.Conn) (net.Conn, error) {
		pc, err := cfg.handshake(c)
		if err != nil && cfg.Refused != nil {
			cfg.Refused(c.RemoteAddr(), err)
		}
		return pc, err
	})
}

func (c *Config) handshake(conn net.Conn) (net.Conn, error) {
	if !c.allowed(conn.RemoteAddr()) {
		return nil, fmt.Errorf("%w: %s", ErrNotAllowed, conn.RemoteAddr())
	}
	pc, err := readHeader(conn, c.timeout())
	if err != nil {
		return nil, err
	}
	return pc, nil
}

// readHeader reads c's header within timeout. What it read past the
// header is kept for the Conn's first reads.
func readHeader(c net.Conn, timeout time.Duration) (*Conn, error) {
	if err := c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, fmt.Errorf("proxyproto: %w", err)
	}
	buf := make([]byte, 0, 256)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(cap(buf), MaxHeader+1-len(buf)))...)[:len(buf)]
		}
		n, rerr := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		h, hn, err := Parse(buf)
		switch {
		case err == nil:
			if err := c.SetReadDeadline(time.Time{}); err != nil {
				return nil, fmt.Errorf("proxyproto: %w", err)
			}
			return newConn(c, h, buf[hn:]), nil
		case !errors.Is(err, ErrIncomplete):
			return nil, err
		case rerr != nil:
			if errors.Is(rerr, io.EOF) && len(buf) == 0 {
				return nil, fmt.Errorf("proxyproto: closed before a header: %w", rerr)
			}
			return nil, fmt.Errorf("proxyproto: reading the header (%d bytes so far): %w", len(buf), rerr)
		}
	}
}

// Conn is a connection whose PROXY header was read: its addresses are
// the header's when it names the client, the socket's otherwise.
type Conn struct {
	net.Conn
	hdr           Header
	rest          []byte // read past the header; returned first
	remote, local net.Addr
}

func newConn(c net.Conn, h Header, rest []byte) *Conn {
	pc := &Conn{Conn: c, hdr: h, remote: c.RemoteAddr(), local: c.LocalAddr()}
	if len(rest) > 0 {
		pc.rest = rest
	}
	if h.Proxied {
		pc.remote, pc.local = net.TCPAddrFromAddrPort(h.Source), net.TCPAddrFromAddrPort(h.Dest)
	}
	return pc
}

// Header is the header the connection opened with.
func (c *Conn) Header() Header { return c.hdr }

// NetConn is the connection the header was read from (as tls.Conn's).
func (c *Conn) NetConn() net.Conn { return c.Conn }

// RemoteAddr is the relayed client's address, or the peer's for a
// header that names none (LOCAL, UNKNOWN).
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr is the address the client connected to at the balancer, or
// the socket's.
func (c *Conn) LocalAddr() net.Addr { return c.local }

func (c *Conn) Read(p []byte) (int, error) {
	if len(c.rest) > 0 {
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		if len(c.rest) == 0 {
			c.rest = nil // the header's buffer can go
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// ReadFrom keeps the socket's own ReadFrom (sendfile, splice) for
// writers that look for it.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// writerOnly hides ReadFrom so that io.Copy does not call back into it.
type writerOnly struct{ io.Writer }

// Proxied reports whether c is a Conn whose header named its client.
func Proxied(c net.Conn) bool {
	pc, ok := c.(*Conn)
	return ok && pc.hdr.Proxied
}

var (
	_ net.Conn      = (*Conn)(nil)
	_ io.ReaderFrom = (*Conn)(nil)
)
