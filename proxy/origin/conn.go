package origin

import (
	"bytes"
	"net"
	"time"
)

// deadlineConn turns fasthttp's single read deadline into two: the client
// sets it before each response, and it bounds the wait for the end of the
// response header; after that every read gets bodyIdle, so a slow but
// moving 1 GiB body is not cut, and a stalled one is.
//
// It also remembers what the retry of a request needs to know about the
// connection the request went out on (retry.go).
type deadlineConn struct {
	net.Conn
	bodyIdle time.Duration
	// local are LocalAddr's answers, made at dial: [0] while nothing has
	// been read from the connection, [1] after.
	local [2]connAddr

	// Owned by the single goroutine using the connection at a time.
	headerDeadline time.Time
	inHeader       bool
	tail           [3]byte
	tailLen        int
	// answered: a byte has ever been read; heard: one has been read since
	// the last Write, that is of the answer to the request being sent.
	answered, heard bool
}

// connAddr is a connection's local address, marked with whether the
// connection had answered a request before, and pointing back at it.
type connAddr struct {
	net.Addr
	conn   *deadlineConn
	reused bool
}

func newDeadlineConn(c net.Conn, bodyIdle time.Duration) *deadlineConn {
	d := &deadlineConn{Conn: c, bodyIdle: bodyIdle}
	d.local = [2]connAddr{{Addr: c.LocalAddr(), conn: d}, {Addr: c.LocalAddr(), conn: d, reused: true}}
	return d
}

// LocalAddr is how a failed request's connection is found again:
// fasthttp tells nothing about it but keeps this value in the response
// (Response.LocalAddr), asked for when the request takes the connection,
// so a reused connection answers with the reused mark.
func (c *deadlineConn) LocalAddr() net.Addr {
	if c.answered {
		return &c.local[1]
	}
	return &c.local[0]
}

var headerEnd = []byte("\r\n\r\n")

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.headerDeadline = t
	c.inHeader = true
	c.tailLen = 0
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline is replaced by an idle deadline per Write.
func (c *deadlineConn) SetWriteDeadline(time.Time) error { return nil }

func (c *deadlineConn) SetDeadline(t time.Time) error {
	return c.SetReadDeadline(t)
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	c.heard = false
	if c.bodyIdle > 0 {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.bodyIdle)); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

func (c *deadlineConn) Read(p []byte) (int, error) {
	if !c.inHeader && c.bodyIdle > 0 {
		if err := c.Conn.SetReadDeadline(time.Now().Add(c.bodyIdle)); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.answered, c.heard = true, true
		if c.inHeader {
			c.scanHeaderEnd(p[:n])
		}
	}
	return n, err
}

// scanHeaderEnd leaves the header phase once CRLFCRLF has been read,
// including across read boundaries.
func (c *deadlineConn) scanHeaderEnd(b []byte) {
	var joined [6]byte
	k := copy(joined[:], c.tail[:c.tailLen])
	k += copy(joined[k:], b[:min(len(b), 3)])
	if bytes.Contains(joined[:k], headerEnd) || bytes.Contains(b, headerEnd) {
		c.inHeader = false
		return
	}
	if len(b) >= 3 {
		c.tailLen = copy(c.tail[:], b[len(b)-3:])
		return
	}
	all := append(c.tail[:c.tailLen:c.tailLen], b...)
	c.tailLen = copy(c.tail[:], all[max(0, len(all)-3):])
}
