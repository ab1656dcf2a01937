package conns

import (
	"sync"
	"unsafe"
)

// A response whose body is in memory and larger than the server's write
// buffer reaches Write as two or three writes: the buffer filled with the
// head and the body's first bytes, the rest of the body straight from
// where it lies, and perhaps a buffered tail. Each is a system call and,
// on loopback, a delivery to the peer. Announced with WriteBody, the
// writes before the body's own are copied aside (a few KiB at most) and
// sent with it in one writev, the body itself never copied.
//
// The caller announces only a body the server will write from where it
// lies: larger than twice its write buffer (after the buffer's first
// flush at least a buffer's worth is left, which bufio writes directly).
// Held bytes never wait on the client even so: they go out with the
// body's write, or before any read, and at Idle.

// vectored is a Conn's held-back writes. Only the serving goroutine
// touches it.
type vectored struct {
	body []byte  // announced body: a write from inside it sends what is held with it
	held *[]byte // pooled; nil when nothing is held
}

// maxHeld bounds what is held back: past it the held bytes go out on
// their own (the body's write came later than a server's buffer explains).
const maxHeld = 64 << 10

var heldPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// WriteBody tells c that the response the server writes next ends with
// body, which stays unchanged in memory until the response is written,
// and which the server writes from where it lies (see above). Without a
// raw socket it does nothing. Call it from the serving goroutine.
func (c *Conn) WriteBody(body []byte) {
	if c.raw == nil || len(body) == 0 {
		return
	}
	c.vec.body = body
}

// writeVectored is Write while a body is announced.
func (c *Conn) writeVectored(p []byte) (int, error) {
	if !inside(p, c.vec.body) {
		if c.vec.held == nil {
			c.vec.held = heldPool.Get().(*[]byte)
		}
		if len(*c.vec.held)+len(p) <= maxHeld {
			*c.vec.held = append(*c.vec.held, p...)
			return len(p), nil
		}
		if err := c.sendHeld(); err != nil {
			return 0, err
		}
		return c.sock.Write(p)
	}
	c.vec.body = nil
	if c.vec.held == nil {
		return c.raw.Write(p)
	}
	held := *c.vec.held
	n, err := c.raw.WriteTwo(held, p)
	c.releaseHeld()
	return max(n-len(held), 0), err
}

// sendHeld writes what is held and forgets the announced body. With
// nothing announced it only reads c.vec: a connection whose reads and
// writes run on two goroutines (HTTP/2, TLS) never announces a body, and
// must not see a write here racing its writer's read.
func (c *Conn) sendHeld() error {
	if c.vec.body == nil && c.vec.held == nil {
		return nil
	}
	c.vec.body = nil
	if c.vec.held == nil {
		return nil
	}
	_, err := c.sock.Write(*c.vec.held)
	c.releaseHeld()
	return err
}

func (c *Conn) releaseHeld() {
	*c.vec.held = (*c.vec.held)[:0]
	heldPool.Put(c.vec.held)
	c.vec.held = nil
}

// inside reports whether p starts within body's memory: the server
// writing the body from where it lies.
func inside(p, body []byte) bool {
	if len(p) == 0 || len(body) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(body)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	return at >= start && at < start+uintptr(len(body))
}
