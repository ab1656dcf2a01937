package h2

import (
	"crypto/tls"
	"net"
	"runtime"
	"sync"
	"time"
)

// coalesceLimit is how many bytes Write queues before it waits for the
// writer goroutine: the backlog a slow client can hold per connection.
const coalesceLimit = 64 << 10

// closeFlushTimeout bounds how long Close waits for queued bytes (a
// GOAWAY, the last responses) to reach a client that stopped reading.
const closeFlushTimeout = time.Second

// coalescingConn gathers the writes x/net/http2 makes to a connection
// and sends them from a goroutine of its own that first lets the other
// runnable goroutines go. x/net/http2 flushes whenever its write queue
// runs dry, which under load is after every frame: a stream's HEADERS
// and its DATA each wait for the serve goroutine, so a small response
// cost two TLS records and two write system calls. Here the frames the
// connection's other streams produce meanwhile go out in the same
// record and system call. Write copies p and returns at once; a write
// error is returned by the next Write and closes the connection, which
// ends ServeConn through its reads. Close sends what is queued first.
type coalescingConn struct {
	net.Conn // the connection; its Write is only called from flush

	mu      sync.Mutex
	cond    sync.Cond // signalled when buf drains or flushing stops
	buf     *[]byte   // queued bytes, nil when none
	writing bool      // a flush goroutine runs
	err     error     // the first write error, then returned by Write
}

// tlsCoalescingConn lets x/net/http2 see the TLS state through the
// wrapper (it checks the version and cipher suite).
type tlsCoalescingConn struct {
	coalescingConn
	state tls.ConnectionState
}

func (c *tlsCoalescingConn) ConnectionState() tls.ConnectionState { return c.state }

// coalesce wraps c for x/net/http2.
func coalesce(c net.Conn) net.Conn {
	if tc, ok := c.(interface{ ConnectionState() tls.ConnectionState }); ok {
		w := &tlsCoalescingConn{coalescingConn: coalescingConn{Conn: c}, state: tc.ConnectionState()}
		w.cond.L = &w.mu
		return w
	}
	w := &coalescingConn{Conn: c}
	w.cond.L = &w.mu
	return w
}

// coalesceBufs holds backlogs of the limit's size: Write never grows one
// unless a single write is larger.
var coalesceBufs = sync.Pool{New: func() any { b := make([]byte, 0, coalesceLimit); return &b }}

func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && c.buf != nil && len(*c.buf)+len(p) > coalesceLimit {
		c.cond.Wait() // backpressure: a full backlog is being written
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.buf == nil {
		c.buf = coalesceBufs.Get().(*[]byte)
	}
	*c.buf = append(*c.buf, p...)
	if !c.writing {
		c.writing = true
		go c.flush()
	}
	return len(p), nil
}

// flush writes the queued bytes until none are left. It yields first so
// that the streams and the serve goroutine queue what they have ready.
func (c *coalescingConn) flush() {
	runtime.Gosched()
	c.mu.Lock()
	for c.buf != nil && c.err == nil {
		b := c.buf
		c.buf = nil
		c.cond.Broadcast()
		c.mu.Unlock()
		_, err := c.Conn.Write(*b)
		if cap(*b) <= 2*coalesceLimit {
			*b = (*b)[:0]
			coalesceBufs.Put(b)
		}
		c.mu.Lock()
		if err != nil && c.err == nil {
			c.err = err
			_ = c.Conn.Close() // the reads fail too and ServeConn returns
		}
	}
	if c.buf != nil { // not written after an error
		*c.buf = (*c.buf)[:0]
		coalesceBufs.Put(c.buf)
		c.buf = nil
	}
	c.writing = false
	c.cond.Broadcast()
	c.mu.Unlock()
}

// Close sends what is queued, waiting at most closeFlushTimeout, and
// closes the connection.
func (c *coalescingConn) Close() error {
	c.mu.Lock()
	if c.writing {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(closeFlushTimeout))
		for c.writing {
			c.cond.Wait()
		}
	}
	if c.err == nil {
		c.err = net.ErrClosed
	}
	c.mu.Unlock()
	return c.Conn.Close()
}
