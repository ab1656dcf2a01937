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
	addr     net.Addr // the connection's own LocalAddr

	// Owned by the single goroutine using the connection at a time.
	headerDeadline time.Time
	inHeader       bool
	// head holds the response header bytes read so far, while inHeader,
	// up to maxHead: interim (1xx) responses are taken from it.
	head     []byte
	headFull bool // past maxHead: looking for the header's end only
	// cur is what LocalAddr last answered: the request now on the
	// connection, which its interim responses go to.
	cur *connAddr
	// answered: a byte has ever been read; heard: one has been read since
	// the last Write, that is of the answer to the request being sent.
	answered, heard bool
}

// maxHead bounds the header bytes kept while looking for interim
// responses; the end of a larger header is still found.
const maxHead = 16 << 10

// connAddr is a connection's local address as one request got it: marked
// with whether the connection had answered a request before, pointing
// back at it, and holding the interim responses the request received.
type connAddr struct {
	net.Addr
	conn    *deadlineConn
	reused  bool
	interim []Interim
}

func newDeadlineConn(c net.Conn, bodyIdle time.Duration) *deadlineConn {
	return &deadlineConn{Conn: c, bodyIdle: bodyIdle, addr: c.LocalAddr()}
}

// LocalAddr is how a request's connection is found again: fasthttp tells
// nothing about it but keeps this value in the response
// (Response.LocalAddr), asked for when the request takes the connection.
// Each request gets its own, so what it holds stays the request's after
// the connection went on to serve another.
func (c *deadlineConn) LocalAddr() net.Addr {
	c.cur = &connAddr{Addr: c.addr, conn: c, reused: c.answered}
	return c.cur
}

var headerEnd = []byte("\r\n\r\n")

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.headerDeadline = t
	c.inHeader = true
	c.head, c.headFull = c.head[:0], false
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
			c.scanHeader(p[:n])
		}
	}
	return n, err
}

// scanHeader leaves the header phase once the final response's header
// has been read (its CRLFCRLF, across read boundaries), taking the
// interim responses before it for the request (fasthttp's client reads
// and drops them).
func (c *deadlineConn) scanHeader(b []byte) {
	if c.headFull {
		c.head = append(c.head, b...)
		if bytes.Contains(c.head, headerEnd) {
			c.inHeader = false
		}
		c.head = c.head[:copy(c.head, c.head[max(0, len(c.head)-3):])]
		return
	}
	c.head = append(c.head, b...)
	for {
		i := bytes.Index(c.head, headerEnd)
		if i < 0 {
			if len(c.head) > maxHead {
				c.headFull = true
				c.head = c.head[:copy(c.head, c.head[len(c.head)-3:])]
			}
			return
		}
		im, ok := parseInterim(c.head[:i+2])
		if !ok {
			c.inHeader = false
			return
		}
		if c.cur != nil {
			c.cur.interim = append(c.cur.interim, im)
		}
		c.head = c.head[:copy(c.head, c.head[i+4:])]
	}
}
