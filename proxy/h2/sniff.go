package h2

import (
	"bytes"
	"crypto/tls"
	"net"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// sniffListener sorts the connections of a plain listener: those that
// open with the HTTP/2 client preface become *h2cConn, which fasthttp
// takes for a TLS connection that negotiated h2 and hands to serveH2;
// the rest are HTTP/1.1 for fasthttp. Sorting reads the first bytes, so
// it runs in a goroutine per new connection, bounded by timeout, never
// in the accept loop. With h2c off, connections pass through unread.
type sniffListener struct {
	net.Listener
	h2c       bool
	behindTLS bool
	timeout   time.Duration

	sorted     chan net.Conn
	closed     chan struct{}
	closeOnce  sync.Once
	acceptDone chan struct{} // closed when acceptLoop returns
	acceptErr  error         // set before acceptDone closes
	sniffers   sync.WaitGroup

	mu      sync.Mutex // guards pending
	pending map[net.Conn]struct{}
}

func newSniffListener(ln net.Listener, h2c, behindTLS bool, timeout time.Duration) *sniffListener {
	l := &sniffListener{
		Listener:   ln,
		h2c:        h2c,
		behindTLS:  behindTLS,
		timeout:    timeout,
		sorted:     make(chan net.Conn),
		closed:     make(chan struct{}),
		acceptDone: make(chan struct{}),
		pending:    make(map[net.Conn]struct{}),
	}
	go l.acceptLoop()
	return l
}

func (l *sniffListener) acceptLoop() {
	defer close(l.acceptDone)
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.acceptErr = err
			return
		}
		l.mu.Lock()
		l.pending[c] = struct{}{}
		l.mu.Unlock()
		l.sniffers.Add(1)
		go l.sniff(c)
	}
}

func (l *sniffListener) sniff(c net.Conn) {
	defer l.sniffers.Done()
	sorted, ok := l.sort(c)
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
	if !ok {
		_ = c.Close() // silent or gone before its first bytes
		return
	}
	select {
	case l.sorted <- sorted:
	case <-l.closed:
		_ = c.Close() // the server stopped accepting
	}
}

// sort reads as much of the preface as the client sends and stops at the
// first byte that differs: "GET / HTTP/1.0\r\n\r\n" is shorter than the
// preface and must not wait for more.
func (l *sniffListener) sort(c net.Conn) (net.Conn, bool) {
	rc := replayConn{Conn: c}
	if !l.h2c {
		return l.http1(rc), true
	}
	if err := c.SetReadDeadline(time.Now().Add(l.timeout)); err != nil {
		return nil, false
	}
	preface := []byte(http2.ClientPreface)
	buf := make([]byte, len(preface))
	n := 0
	for n < len(buf) && bytes.Equal(buf[:n], preface[:n]) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			if n == 0 {
				return nil, false
			}
			break // let the protocol that owns these bytes report it
		}
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		return nil, false
	}
	rc.buf = buf[:n]
	if bytes.Equal(rc.buf, preface) {
		return &h2cConn{replayConn: rc}, true
	}
	return l.http1(rc), true
}

func (l *sniffListener) http1(rc replayConn) net.Conn {
	if l.behindTLS {
		return &terminatedConn{replayConn: rc}
	}
	if rc.buf == nil {
		return rc.Conn
	}
	return &rc
}

func (l *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.sorted:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.acceptDone:
		return nil, l.acceptErr
	}
}

// Close stops accepting, cuts short the connections still being sorted
// and waits for their goroutines.
func (l *sniffListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closed)
		err = l.Listener.Close()
		<-l.acceptDone
		l.mu.Lock()
		for c := range l.pending {
			_ = c.SetReadDeadline(time.Now()) // wakes its sniffer
		}
		l.mu.Unlock()
		l.sniffers.Wait()
	})
	return err
}

// replayConn returns buf before reading on from Conn.
type replayConn struct {
	net.Conn
	buf []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// h2cConn is a plain connection that sent the HTTP/2 preface. It poses
// as a TLS connection that negotiated h2 so that fasthttp hands it to
// serveH2, which unwraps it again.
type h2cConn struct{ replayConn }

func (*h2cConn) Handshake() error { return nil }

func (*h2cConn) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{NegotiatedProtocol: http2.NextProtoTLS}
}

// terminatedConn is an HTTP/1.1 connection from a TLS terminator in
// front: it poses as TLS so that the handler's ctx.IsTLS() is true.
type terminatedConn struct{ replayConn }

func (*terminatedConn) Handshake() error { return nil }

func (*terminatedConn) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }

var _ net.Listener = (*sniffListener)(nil)
