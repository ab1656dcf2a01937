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
type deadlineConn struct {
	net.Conn
	bodyIdle time.Duration

	// Owned by the single goroutine using the connection at a time.
	headerDeadline time.Time
	inHeader       bool
	tail           [3]byte
	tailLen        int
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
	if c.inHeader && n > 0 {
		c.scanHeaderEnd(p[:n])
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
