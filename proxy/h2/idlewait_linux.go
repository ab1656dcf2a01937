package h2

import (
	"syscall"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
)

// waitReadable returns once rc's socket has bytes, end of file or an
// error to read, or its read deadline passed. It parks in Go's netpoller
// a few frames deep.
func waitReadable(rc syscall.RawConn) error {
	return rc.Read(readable)
}

// socketReady reports whether c's socket has bytes, end of file or an
// error to read now: then the read does not wait, and no read with a past
// deadline (whose error allocates) is needed to look for bytes a wrapper
// holds.
func (c *conn) socketReady() bool {
	if c.peek == nil {
		c.peek = func(fd uintptr) { c.ready = readable(fd) } // made once: Control's argument escapes
	}
	c.ready = false
	if err := c.sock.Control(c.peek); err != nil {
		return true // the read reports it
	}
	return c.ready
}

// readable is rc.Read's test: a peek that takes nothing.
func readable(fd uintptr) bool {
	_, errno := rawsock.Peek(fd)
	return errno != syscall.EAGAIN // EINTR too: the read after it tells
}
