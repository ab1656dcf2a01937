package conns

import (
	"errors"
	"fmt"
)

// A hit the disk tier sends from its file (proxy/sendfile.go) is the
// response's head, then the body with sendfile from the file's own
// offset: the descriptor is shared by every answer sending from it, so
// the socket's ReadFrom (which sends from the descriptor's offset) will
// not do. Announced (WriteFile), the head is held and goes out with
// MSG_MORE just before the sendfile, so that head and body leave in one
// segment: one loopback delivery, as a RAM hit's single writev.

// fileMark is the body WriteFile announces: no write is inside it, so
// every write is held until SendFile.
var fileMark [1]byte

// WriteFile tells c that the response the server writes next ends with a
// body SendFile sends. Without a raw socket it does nothing. Call it from
// the serving goroutine.
func (c *Conn) WriteFile() {
	if c.raw == nil {
		return
	}
	c.vec.body = fileMark[:]
}

// SendFile sends n bytes of the file fd from off on c (sendfile), after
// what was written before, and reports the bytes of the file sent; cold:
// its pages may have to be read from the disk (rawsock.Sock.SendFile). On a
// connection that is not a raw TCP socket it sends nothing and returns an
// error wrapping errors.ErrUnsupported. Call it from the serving
// goroutine.
func (c *Conn) SendFile(fd int, off, n int64, cold bool) (int64, error) {
	if c.raw == nil {
		if err := c.sendHeld(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("conns: sendfile: %w", errors.ErrUnsupported)
	}
	var head []byte
	if c.vec.held != nil {
		head = *c.vec.held
	}
	c.vec.body = nil
	sent, err := c.raw.SendFile(head, fd, off, n, cold) // the socket's one write loop
	if c.vec.held != nil {
		c.releaseHeld()
	}
	return sent, err
}
