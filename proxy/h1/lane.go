package h1

import (
	"bufio"
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// Config is a Lane's.
type Config struct {
	// Server serves what Inline does not answer, and every connection's
	// first request (conns.Conn's accept and wake rules are fasthttp's).
	// Its listener must yield (conns.Config.Yield) for the lane to see a
	// connection again between requests.
	Server *fasthttp.Server
	// Inline answers a request at once or declines it having changed
	// nothing (proxy.Proxy.ServeHit).
	Inline func(*fasthttp.RequestCtx) bool
	// Name is the Server field an answer without one gets, as Server's
	// Name.
	Name         string
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// WriteBufferSize is the buffer an answer is written through, as
	// Server's.
	WriteBufferSize int
	Log             streamctx.Logger
}

// Lane serves connections (Serve) and stops them (Stop).
type Lane struct {
	cfg      Config
	ctxs     streamctx.Contexts
	bufs     sync.Pool // *buffers
	stopping atomic.Bool
	answered atomic.Uint64
	mu       sync.Mutex
	open     map[*conns.Awaiter]struct{}
}

// buffers are what a request's head is read from and its answer written
// through, pooled with the context.
type buffers struct {
	src bytes.Reader
	br  *bufio.Reader
	bw  *bufio.Writer
}

// New returns a Lane.
func New(cfg Config) *Lane {
	l := &Lane{cfg: cfg, open: make(map[*conns.Awaiter]struct{})}
	l.ctxs.Log = cfg.Log
	return l
}

// Serve serves c until it ends or parks (the listener hands a woken one
// out again): fasthttp first, then each request the lane answers itself,
// and fasthttp again from the first it does not.
func (l *Lane) Serve(c net.Conn) {
	pc, ok := c.(*conns.Conn)
	if !ok {
		_ = l.cfg.Server.ServeConn(c)
		return
	}
	a := conns.NewAwaiter(pc)
	l.track(a, true)
	defer l.track(a, false)
	s := &session{l: l, c: pc}
	s.serveFn = s.serve
	for {
		_ = l.cfg.Server.ServeConn(pc)
		if !pc.Yielded() || !s.answerUntilHandOver(a) {
			return
		}
	}
}

// A session is the lane's side of one served connection.
type session struct {
	l       *Lane
	c       *conns.Conn
	last    outcome // of the last serve
	serveFn func() bool
}

// answerUntilHandOver answers the connection's requests as they come
// until one is fasthttp's (true), or the connection ends or parks
// (false).
func (s *session) answerUntilHandOver(a *conns.Awaiter) bool {
	if !a.ServeRequests(s.serveFn) {
		return false
	}
	if s.last == ended {
		_ = s.c.Close() // here, not in serve: it runs inside the connection's read (ServeRequests)
		return false
	}
	return true
}

// serve is ServeRequests': the requests held are answered, and the
// connection awaits the next (true) unless one is fasthttp's or it ends.
func (s *session) serve() bool {
	s.last = s.l.answer(s.c)
	return s.last == awaiting
}

// Answered is how many requests the lane answered itself.
func (l *Lane) Answered() uint64 { return l.answered.Load() }

// Stop has every connection's wait for its next request end with the
// connection closed, and answers from now on close theirs (fasthttp's
// too: Stopping). A connection that has sent nothing yet, or that comes
// after (its listener's Close hands them out as it drains), is still
// answered once.
func (l *Lane) Stop() {
	l.stopping.Store(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.open {
		c.Interrupt()
	}
}

// Stopping reports whether Stop was called: an answer then closes its
// connection.
func (l *Lane) Stopping() bool { return l.stopping.Load() }

// track adds or removes a from the connections Stop interrupts; one
// added after Stop is interrupted at once.
func (l *Lane) track(a *conns.Awaiter, add bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !add {
		delete(l.open, a)
		return
	}
	l.open[a] = struct{}{}
	if l.stopping.Load() {
		a.Interrupt()
	}
}
