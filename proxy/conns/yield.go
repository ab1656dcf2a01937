package conns

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Under 1,000 busy connections what a server keeps per connection while
// it waits for the next request (fasthttp: its request context and read
// buffer, some kilobytes) is out of the CPU's cache by the time that
// request comes, and bringing it back costs more than serving the hit.
// With Config.Yield a connection's server lets go of it between
// requests: its idle Read returns io.EOF at once, without a system call
// (yieldPending), the server ends the connection's service and calls
// Close, which keeps the socket (stAwait), and whoever served it waits
// for the next request (Awaiter.AwaitRequest) on the connection's own
// goroutine, holding no buffer, and reads its first bytes into a pooled
// one taken only then: the next service starts from pooled state the
// last request gave back, still in the cache. The linger, the park and
// the idle timeout stay as they were; AwaitRequest applies them.

// inbufSize is a pooled read buffer's: a request head as clients send
// them; longer ones are read on from the socket by the server. Conn's
// held offsets are uint16.
const inbufSize = 4096

var inbufs = sync.Pool{New: func() any { b := make([]byte, inbufSize); return &b }}

// yields reports whether c's idle Reads yield (Config.Yield, a raw
// socket the lot could park).
func (c *Conn) yields() bool { return c.l.cfg.Yield && c.raw != nil && c.fd >= 0 }

// yieldPending has the server let go of c (io.EOF) so that AwaitRequest
// waits for its next request, unless c was closed meanwhile.
func (c *Conn) yieldPending(intercepted bool) (int, error) {
	c.intercepted = intercepted // AwaitRequest's: whether the server set the idle deadline
	if c.state.CompareAndSwap(stServing, stYielded) {
		return 0, io.EOF
	}
	return 0, net.ErrClosed
}

// Yielded reports whether c's server let go of it to have AwaitRequest
// wait for its next request (its Close kept the socket).
func (c *Conn) Yielded() bool { return c.state.Load() == stAwait }

// Held is what AwaitRequest read of the next request (and what follows
// it) that no Read took yet.
func (c *Conn) Held() []byte {
	if c.held == nil {
		return nil
	}
	return (*c.held)[c.heldAt:c.heldEnd]
}

// Consume marks the first n bytes Held as taken by the caller; the
// server's Reads start after them.
func (c *Conn) Consume(n int) {
	c.heldAt += uint16(n)
	if c.heldAt >= c.heldEnd {
		inbufs.Put(c.held)
		c.held, c.heldAt, c.heldEnd = nil, 0, 0
	}
}

// readHeld returns the bytes AwaitRequest read, and gives their buffer
// back once they are taken.
func (c *Conn) readHeld(p []byte) (int, error) {
	n := copy(p, c.Held())
	c.Consume(n)
	return n, nil
}

// An Awaiter waits for its connection's next requests (AwaitRequest) on
// the goroutine serving it. Interrupt, from any goroutine, ends a wait;
// it lives here, not in the Conn, so that a parked connection does not
// carry it.
type Awaiter struct {
	c        *Conn
	awaiting atomic.Bool // in AwaitRequest's wait, which Interrupt ends
	stop     atomic.Bool // Interrupt was called

	serve  func() bool                 // ServeRequests', while it runs
	eachFn func(b *[]byte, n int) bool // each, made once
	served bool                        // the last wait ended with bytes held for the caller (each)
}

// NewAwaiter returns c's Awaiter.
func NewAwaiter(c *Conn) *Awaiter {
	a := &Awaiter{c: c}
	a.eachFn = a.each
	return a
}

// ServeRequests is AwaitRequest for a connection whose requests the
// caller answers on the waiting goroutine: each time a request's first
// bytes are Held it calls serve, which answers what it can and reports
// whether the connection waits for its next request (true) or is the
// caller's again (false: to hand over or close). The next request is
// awaited within the same wait (rawsock.Sock.ReadPooledEach), which
// spares the read that finds nothing before each wait, so serve must
// neither read from the connection nor close it: it reports false and
// the caller does. ServeRequests reports true when serve let go of the
// connection, false when it was parked or closed, as AwaitRequest.
func (a *Awaiter) ServeRequests(serve func() bool) bool {
	a.serve = serve
	defer func() { a.serve = nil }()
	for a.AwaitRequest() {
		if a.served || !serve() {
			return true
		}
	}
	return false
}

// AwaitRequest waits for the connection's next request, after its
// server let go of it (Yielded) or answered it itself, and reports
// whether one came: its first bytes are then Held, and the connection
// is the caller's to serve from there. Otherwise it was parked (its
// linger passed, or at once after its first answer), closed (the idle
// timeout, the client left, Interrupt) or closed under it, and is no
// longer the caller's.
func (a *Awaiter) AwaitRequest() bool {
	c := a.c
	if !c.state.CompareAndSwap(stAwait, stServing) && c.state.Load() != stServing {
		return false
	}
	got, err := a.await()
	switch {
	case got:
		c.requestCame() // again when serve let go: an answer before made it idle
		return true
	case err == nil && !a.stopped():
		if c.state.CompareAndSwap(stServing, stParkPending) {
			_ = c.Close() // parks
			return false
		}
	}
	_ = c.Close()
	return false
}

// Interrupt ends the connection's AwaitRequest, now or when it next
// waits, with the connection closed: a server stopping does not wait
// out its idle connections. One that has sent nothing yet parks instead,
// as at the end of its linger: its listener's Close waits for its first
// request (drain.go). Any goroutine may call it.
func (a *Awaiter) Interrupt() {
	a.stop.Store(true)
	if a.awaiting.Load() {
		_ = a.c.Conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// stopped reports whether Interrupt ends a's waits: once its connection
// was heard.
func (a *Awaiter) stopped() bool { return a.stop.Load() && !a.c.unheard.Load() }

// await reads the next request's first bytes into c.held: true when it
// did; false and no error when c is to park; an error when it must close.
func (a *Awaiter) await() (bool, error) {
	c := a.c
	a.served = false
	if c.parksAtOnce() {
		return c.takeAfterOthers()
	}
	if err := a.armWait(); err != nil {
		return false, err
	}
	defer a.awaiting.Store(false)
	if a.stopped() {
		return false, net.ErrClosed
	}
	err := c.raw.ReadPooledEach(&inbufs, a.eachFn)
	switch {
	case a.served:
		return true, nil
	case err == nil: // each left the wait to start it again
		if a.stopped() {
			return false, net.ErrClosed
		}
		return c.takeAfterOthers() // after a first answer: park unless the next request is here
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) || a.stopped() || (!c.parkBy.IsZero() && !time.Now().Before(c.parkBy)) {
		return false, err
	}
	got, err := c.takeNow() // bytes the fired deadline beat to the socket (late.go)
	if got {
		c.l.lateReads.Add(1)
		c.linger = min(2*c.linger, c.l.cfg.MaxLinger)
	}
	return got, err
}

// armWait arms the linger's deadline, unless the server set the idle
// one (intercepted), and shows that c awaits. The deadline is armed
// before awaiting shows: an Interrupt that sees it arms its own after,
// and one that does not is seen by the check the caller makes after.
func (a *Awaiter) armWait() error {
	c := a.c
	if !c.intercepted { // the server set no idle deadline: time the linger here
		c.parkBy = time.Time{}
		if err := c.armRead(time.Now().Add(c.wait())); err != nil {
			return err
		}
	}
	a.awaiting.Store(true)
	return nil
}

// each is ReadPooledEach's: the request's first bytes came within the
// wait. It has serve (ServeRequests') answer them and reports whether to
// wait on for the next (true), as await would: not when there is no
// serve (AwaitRequest: the bytes are the caller's) or serve let go of
// the connection, Interrupt came, or the connection is to park unless
// its next request is already there (await makes that read, outside the
// wait).
func (a *Awaiter) each(b *[]byte, n int) bool {
	c := a.c
	c.hold(b, n)
	c.requestCame()
	if a.serve == nil || !a.serve() {
		a.served = true
		return false
	}
	if c.parksAtOnce() || a.armWait() != nil {
		return false
	}
	return !a.stopped() // after armWait: an Interrupt before it was overridden by it
}

// requestCame marks c as serving a request whose first bytes it holds.
func (c *Conn) requestCame() {
	c.heard()
	c.idle, c.fresh, c.intercepted = false, false, false
	c.servingRequest(true)
}

// takeAfterOthers is takeNow for a connection after its first answer,
// which parks unless its next request is there: when it is not there
// yet, the goroutines ready to run get their turn first and the socket
// is looked at again. A busy client's next request comes within
// microseconds of the answer, but on a server whose core has hundreds
// of connections to serve, its turn comes after theirs: 1,000 new
// connections under load parked all at once, and their second requests
// waited for the wake-ups, 2 rounds of the run queue (`wrk -c1000`'s
// p99.9). One that stays idle still parks without waiting on its
// goroutine for the linger: with the core idle, the turn is at once. A
// connection whose next request came lingers from then on, as a woken
// one does.
func (c *Conn) takeAfterOthers() (bool, error) {
	got, err := c.takeNow()
	if !got && err == nil {
		c.l.othersRun()
		got, err = c.takeNow()
	}
	if got {
		c.linger = max(c.linger, c.l.cfg.Linger)
	}
	return got, err
}

// takeNow takes what the socket holds now into c.held.
func (c *Conn) takeNow() (bool, error) {
	b, n, err := c.raw.ReadPooledNow(&inbufs)
	if n > 0 {
		c.hold(b, n)
		return true, nil
	}
	return false, err
}

// hold keeps the first bytes of c's next request for its server's
// Reads. The linger's deadline stays armed: the server's next one (its
// header timeout) is later and waits until a read needs it
// (readdeadline.go), as at a keep-alive request's first byte.
func (c *Conn) hold(b *[]byte, n int) { c.held, c.heldAt, c.heldEnd = b, 0, uint16(n) }
