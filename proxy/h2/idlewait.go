package h2

import (
	"crypto/tls"
	"net"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
)

// An idle connection's goroutine waits for the client on the socket
// itself, not in a read of the connection: crypto/tls's read path is
// about 1.4 KiB of stack, under fasthttp's serving frames, so a goroutine
// waiting in it uses more than a quarter of an 8 KiB stack and the
// garbage collector, which halves only stacks that use less, leaves every
// idle TLS connection 8 KiB of stack where 4 KiB would do.

// longAgo is a read deadline already past: a read with it returns only
// what the connection's wrappers have buffered.
var longAgo = time.Unix(1, 0)

// readFirst reads the client's next byte into src.first. When the
// socket has none yet and no wrapper holds one buffered, it first waits
// for the socket to be readable (waitReadable), on a shallow stack; the
// deadline waitForFrame set bounds that wait as it would the read.
func (c *conn) readFirst() (int, error) {
	if c.sock != nil && !c.socketReady() {
		n, err := c.readBuffered()
		if n > 0 || !isTimeout(err) {
			return n, err
		}
		if tc, ok := c.nc.(*tls.Conn); ok {
			shedTLSInput(tc) // nothing is buffered: the handshake's buffers go (tlsinput.go)
		}
		conns.WaitingIdle(1) // a burst of idle connections is settled (conns/settle.go)
		err = waitReadable(c.sock)
		conns.WaitingIdle(-1)
		if err != nil {
			return 0, err
		}
	}
	return c.nc.Read(c.src.first[:])
}

// readBuffered reads a byte the connection's wrappers already hold (a
// TLS record crypto/tls read with the one before, the preface h2c
// sniffing took) without waiting for the socket: with a deadline already
// past, a read that would need the socket fails at once, and crypto/tls
// keeps what it has for the next read. The read deadline is then put
// back as waitForFrame or a wake-up (wakeIfDone) last set it.
func (c *conn) readBuffered() (int, error) {
	if err := c.nc.SetReadDeadline(longAgo); err != nil {
		return 0, err
	}
	n, err := c.nc.Read(c.src.first[:])
	c.mu.Lock()
	derr := c.nc.SetReadDeadline(c.readBy)
	c.mu.Unlock()
	if err == nil {
		err = derr
	}
	return n, err
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
