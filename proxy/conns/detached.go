package conns

import (
	"net"
	"time"
)

// detached stands in for a parked connection's net.Conn once the lot
// holds only its socket's descriptor (detach_linux.go): a call that
// comes late, after the connection was parked, fails as on a closed
// connection instead of reaching a socket the lot owns. It has no size.
type detached struct{}

func (detached) Read([]byte) (int, error)         { return 0, net.ErrClosed }
func (detached) Write([]byte) (int, error)        { return 0, net.ErrClosed }
func (detached) Close() error                     { return net.ErrClosed }
func (detached) LocalAddr() net.Addr              { return parkedAddr{} }
func (detached) RemoteAddr() net.Addr             { return parkedAddr{} }
func (detached) SetDeadline(time.Time) error      { return net.ErrClosed }
func (detached) SetReadDeadline(time.Time) error  { return net.ErrClosed }
func (detached) SetWriteDeadline(time.Time) error { return net.ErrClosed }

// isDetached reports whether c's socket is only the lot's descriptor.
func (c *Conn) isDetached() bool {
	_, ok := c.Conn.(detached)
	return ok
}

// parkedAddr is a detached connection's address: its own is not kept.
type parkedAddr struct{}

func (parkedAddr) Network() string { return "tcp" }
func (parkedAddr) String() string  { return "parked" }

var _ net.Conn = detached{}
