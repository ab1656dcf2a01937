package conns

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config is one listener's limits and parking.
type Config struct {
	Name string // for logs: "main", "tls"
	// MaxConns bounds the open connections, parked ones included; one
	// over it is refused. 0 means no bound.
	MaxConns int
	// MaxPerIP bounds the open connections of one client address (the
	// one a PROXY header names, when the listener reads them); one over
	// it is refused. 0 means no bound.
	MaxPerIP int
	// Park parks idle connections (see Conn). Only for servers that call
	// Conn.Idle, and only where the socket's readiness means a request
	// (plain TCP: not under TLS, whose records may be buffered).
	Park bool
	// Linger is how long an idle connection waits on its goroutine for
	// the next request before it is parked: a client under load sends
	// it within microseconds, and waking a parked connection costs a few
	// syscalls. 0 means 20 ms. It is where a connection starts; see
	// MaxLinger.
	Linger time.Duration
	// MaxLinger bounds a connection's own linger, which doubles each
	// time it wakes soon after parking (a client that pauses between
	// requests longer than the linger, as 1,000 clients sharing one
	// core do, would otherwise park and wake once per request) and falls
	// back to Linger after a long sleep. 0 means 1 s.
	MaxLinger time.Duration
	// Yield has a connection's idle Read let go of its server at once
	// (io.EOF, the Close after it keeping the socket) for AwaitRequest to
	// wait for the next request (yield.go). Only with Park, for a server
	// whose caller calls AwaitRequest.
	Yield bool
	// PlainHTTP answers a refused connection with a short HTTP response
	// (503 over MaxConns, 429 over MaxPerIP) before closing it. Off (a
	// TLS listener), refused connections are only closed.
	PlainHTTP bool
	// DrainGrace is how long Close waits, when parking, for connections
	// that have sent nothing yet to send their first request (drain.go).
	// 0 means 1 s.
	DrainGrace time.Duration
}

// Stats are a listener's counters, for metrics.
type Stats struct {
	Open, Parked                int64
	Parks                       uint64 // connections parked so far
	LateReads                   uint64 // requests found as a linger deadline fired (late.go): parks saved
	RefusedMax, RefusedPerIP    uint64
	AcceptErrors, AcceptBackoff uint64
}

// Listener accepts from an inner listener, applies the limits, and
// hands out new connections and woken parked ones alike. It owns the
// accept goroutine and, when parking, the lot's poller goroutine; Close
// stops both, and closes every parked connection once those that have
// sent nothing yet were heard (drain.go).
type Listener struct {
	inner net.Listener
	cfg   Config
	log   *slog.Logger
	lot   *lot // nil when not parking

	accepted chan net.Conn
	woken    chan net.Conn
	left     chan net.Conn // those the accept goroutine held as Close began
	closed   chan struct{} // Close began
	quiet    chan struct{} // Close ended: Accept hands out what is left, then net.ErrClosed
	once     sync.Once
	done     chan struct{} // the accept goroutine's end

	unheard  atomic.Int64  // connections that have sent nothing yet (drain.go)
	allHeard chan struct{} // unheard fell to 0 (a signal drain's wait looks at again)

	open                        atomic.Int64
	refusedMax, refusedPerIP    atomic.Uint64
	acceptErrors, acceptBackoff atomic.Uint64
	lateReads                   atomic.Uint64
	refusers                    chan struct{} // bounds the goroutines answering refused connections

	mu    sync.Mutex // guards perIP
	perIP map[netip.Addr]int32

	othersRun func() // lets the goroutines ready to run have their turn (takeAfterOthers); tests replace it
}

// NewListener starts accepting from inner. With cfg.Park on a system
// without epoll it serves without parking (and logs why).
func NewListener(inner net.Listener, cfg Config, log *slog.Logger) *Listener {
	if cfg.Linger <= 0 {
		cfg.Linger = 20 * time.Millisecond
	}
	if cfg.MaxLinger < cfg.Linger {
		cfg.MaxLinger = max(time.Second, cfg.Linger)
	}
	if cfg.DrainGrace <= 0 {
		cfg.DrainGrace = drainGrace
	}
	l := &Listener{inner: inner, cfg: cfg, log: log, othersRun: runtime.Gosched,
		accepted: make(chan net.Conn), woken: make(chan net.Conn, 256), left: make(chan net.Conn, 1),
		closed: make(chan struct{}), quiet: make(chan struct{}), done: make(chan struct{}), allHeard: make(chan struct{}, 1),
		refusers: make(chan struct{}, 32), perIP: make(map[netip.Addr]int32)}
	if cfg.Park {
		lt, err := newLot(l)
		if err != nil {
			log.Warn("idle connections are not parked", "listener", cfg.Name, "err", err)
		} else {
			l.lot = lt
			lt.start()
		}
	}
	go l.acceptLoop()
	return l
}

// Accept returns the next new or woken connection, a *Conn. Once Close
// began it hands out the connections Close leaves to be served (a new
// one the accept goroutine held, those woken as it drains), then
// net.ErrClosed once Close ended.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.woken:
		return c, nil
	case c := <-l.accepted:
		return c, nil
	case c := <-l.left:
		return c, nil
	case <-l.quiet:
	}
	select {
	case c := <-l.woken:
		return c, nil
	case c := <-l.left:
		return c, nil
	default:
		return nil, net.ErrClosed
	}
}

// Addr is the inner listener's.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

// Close stops accepting and waits for the accept goroutine; the
// connections it held (one, or one per socket of an inner listener of
// several, handed out by that listener before it says closed) are
// handed out, not closed. Then, when parking, it drains: the
// connections that have sent nothing yet get up to DrainGrace for their
// first request (drain.go), while the other parked ones are closed at
// once; the poller stops and closes what is parked. Connections being
// served are the server's to finish. The server must go on calling
// Accept until it reports net.ErrClosed.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.closed)
		err = l.inner.Close()
		<-l.done
		if l.lot != nil {
			l.drain()
			l.lot.close()
		}
		close(l.quiet)
	})
	return err
}

// Stats reads the counters.
func (l *Listener) Stats() Stats {
	s := Stats{Open: l.open.Load(), RefusedMax: l.refusedMax.Load(), RefusedPerIP: l.refusedPerIP.Load(),
		AcceptErrors: l.acceptErrors.Load(), AcceptBackoff: l.acceptBackoff.Load(), LateReads: l.lateReads.Load()}
	if l.lot != nil {
		s.Parked, s.Parks = l.lot.count()
	}
	return s
}

func (l *Listener) acceptLoop() {
	defer close(l.done)
	var backoff time.Duration
	for {
		c, err := l.inner.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || l.closing() {
				return
			}
			// Closed during the pause: asked once more, the inner
			// listener hands out what it still holds, then says closed.
			backoff = l.acceptFailed(err, backoff)
			l.sleep(backoff)
			continue
		}
		backoff = 0
		pc, reason := l.admit(c)
		if pc == nil {
			l.refuse(c, reason)
			continue
		}
		select {
		case l.accepted <- pc:
		case <-l.closed:
			// Its request is answered all the same: Accept hands it out.
			// An inner listener of several sockets may hold more, one
			// each, until it reports closed (cmd/ramjet's listen list).
			l.left <- pc
		}
	}
}

// acceptFailed counts a failed accept and returns the next pause. Out of
// descriptors (EMFILE, ENFILE) or kernel memory, accept fails until a
// connection closes: pausing 5 ms, doubling to 1 s, keeps the loop from
// spinning while those who hold connections finish.
func (l *Listener) acceptFailed(err error, backoff time.Duration) time.Duration {
	l.acceptErrors.Add(1)
	if backoff == 0 {
		l.log.Warn("accept failed; backing off", "listener", l.cfg.Name, "err", err,
			"out_of_descriptors", errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE))
		return 5 * time.Millisecond
	}
	return min(2*backoff, time.Second)
}

// sleep pauses for d, or until Close begins.
func (l *Listener) sleep(d time.Duration) {
	l.acceptBackoff.Add(1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.closed:
	}
}

// closing reports whether Close began.
func (l *Listener) closing() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// Refusal reasons.
const (
	reasonMax = iota + 1
	reasonPerIP
)

// admit counts c under the limits and wraps it, or says why not.
func (l *Listener) admit(c net.Conn) (*Conn, int) {
	if n := l.open.Add(1); l.cfg.MaxConns > 0 && n > int64(l.cfg.MaxConns) {
		l.open.Add(-1)
		return nil, reasonMax
	}
	peer := peerOf(c)
	if l.cfg.MaxPerIP > 0 {
		ip := peer.Addr().Unmap()
		l.mu.Lock()
		n := l.perIP[ip] + 1
		if n > int32(l.cfg.MaxPerIP) {
			l.mu.Unlock()
			l.open.Add(-1)
			return nil, reasonPerIP
		}
		l.perIP[ip] = n
		l.mu.Unlock()
	}
	return newConn(l, c, peer), 0
}

// release gives back c's place under the limits when it closes.
// The address's count goes first: whoever sees the open count drop sees
// the address's dropped too.
func (l *Listener) release(c *Conn) {
	if l.cfg.MaxPerIP > 0 {
		ip := c.ip.Unmap()
		l.mu.Lock()
		if n := l.perIP[ip] - 1; n > 0 {
			l.perIP[ip] = n
		} else {
			delete(l.perIP, ip)
		}
		l.mu.Unlock()
	}
	l.open.Add(-1)
}

// peerOf is c's remote address and port; zero when it is not TCP's. The
// per-address limit counts its address unmapped (an IPv4 client of a
// dual-stack listener as IPv4).
func peerOf(c net.Conn) netip.AddrPort {
	if t, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	return netip.AddrPort{}
}

// The answers to refused connections on a plain listener. A client that
// opens too many gets 429 as nginx's limit_conn can be set to answer; a
// full server 503, as fasthttp answers past its concurrency.
var (
	replyMax   = reply("503 Service Unavailable", "too many connections\n")
	replyPerIP = reply("429 Too Many Requests", "too many connections from your address\n")
)

func reply(status, body string) []byte {
	return []byte("HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(body)) +
		"\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body)
}

// refuse counts and closes c. On a plain listener it first answers, on a
// goroutine of its own (at most 32 at once, else c is just closed): the
// answer goes out, the connection is shut for writing, and what the
// client sent is read away for up to a second, so that closing with
// unread bytes does not reset the connection before the client reads
// the answer.
func (l *Listener) refuse(c net.Conn, reason int) {
	reply := replyMax
	if reason == reasonPerIP {
		l.refusedPerIP.Add(1)
		reply = replyPerIP
	} else {
		l.refusedMax.Add(1)
	}
	if !l.cfg.PlainHTTP {
		_ = c.Close() // nothing to tell a TLS client before its handshake
		return
	}
	select {
	case l.refusers <- struct{}{}:
	default:
		_ = c.Close() // a flood: answering each would cost more than it helps
		return
	}
	go func() {
		defer func() { <-l.refusers }()
		answerAndClose(c, reply)
	}()
}

func answerAndClose(c net.Conn, reply []byte) {
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return
	}
	if _, err := c.Write(reply); err != nil {
		return
	}
	if cw, ok := unwrap(c).(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite() // the close below still ends it
	}
	var buf [512]byte
	for i := 0; i < 64; i++ { // at most 32 KiB read away
		if _, err := c.Read(buf[:]); err != nil {
			return
		}
	}
}

var _ net.Listener = (*Listener)(nil)
