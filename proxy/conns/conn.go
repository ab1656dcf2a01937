package conns

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
)

// A Conn's life, in its state field: served by a goroutine, asked to
// park (its waiting Read returned io.EOF), parked in the lot, closed.
const (
	stServing int32 = iota
	stParkPending
	stParked
	stClosed
	stYielded // its idle Read returned io.EOF to end the server's service (yield.go)
	stAwait   // and the server's Close kept it, for AwaitRequest
)

// Conn is an accepted connection. It is served like any net.Conn; the
// server calls Idle after each answer, and a Read that then finds no
// request within the linger time returns io.EOF, after which Close parks
// the connection instead of closing it (when parking is on and the
// socket can be polled).
type Conn struct {
	net.Conn                 // the accepted one (a TCP connection, or one a PROXY header named)
	sock     io.ReadWriter   // Conn's reads and writes: raw system calls on a plain TCP socket (internal/rawsock)
	raw      *rawsock.Sock   // sock when it is raw: the one that can send a head and a body in one writev; nil while parked
	rc       syscall.RawConn // a plain TCP socket's, for the Sock it takes again when woken; nil when not raw
	l        *Listener
	ip       netip.Addr // the client's address and port, as RemoteAddr names them (PeerAddrPort)
	fd       int        // the socket, for the lot's epoll set; -1: never parked. Detached: the lot's dup of it
	state    atomic.Int32
	port     uint16
	heldAt   uint16        // held's first byte not read yet (yield.go)
	wdl      writeDeadline // the write deadline armed, under its own lock (deadline.go)
	rdl      readDeadline  // the read deadline armed, and one deferred (readdeadline.go)

	// Fields of the serving goroutine (handed over with the connection
	// by the lot's wake, through a channel).
	idle        bool          // the server waits for the next request: the next Read may park
	fresh       bool          // no request served since accept or wake
	intercepted bool          // the server set a read deadline while idle
	rdlFlags                  // rdl's, beside these to keep a Conn in a 240 B allocation (readdeadline.go)
	heldEnd     uint16        // held's end (yield.go)
	parkBy      time.Time     // that deadline: a parked connection is closed then; zero: never
	linger      time.Duration // this connection's own wait before parking (lingerFor); 0: none yet (parksAtOnce)
	vec         vectored      // a response's writes held back to go out with its body (vectored.go)
	held        *[]byte       // a pooled buffer with a request's first bytes AwaitRequest read, for the next Reads; nil: none (yield.go)

	// Fields of the lot, under its mutex.
	heapIdx  int32         // position in the lot's deadline heap; -1 when not parked
	unheard  atomic.Bool   // no byte came yet since accept (drain.go); beside heapIdx, in what int32 leaves
	by       time.Duration // parkBy after epoch, or never; offsets, not time.Time, keep a Conn in a 192 B allocation
	parkedAt time.Duration // when it was parked, after epoch
}

// epoch is what parked connections' times are offsets from (Conn.by,
// parkedAt): the process's start, read with the monotonic clock.
var epoch = time.Now()

func newConn(l *Listener, c net.Conn, peer netip.AddrPort) *Conn {
	pc := &Conn{Conn: c, sock: c, l: l, ip: peer.Addr(), port: peer.Port(), fd: -1, heapIdx: -1, idle: true, fresh: true, linger: l.cfg.Linger}
	if tc, ok := c.(*net.TCPConn); ok { // not under a wrapper that buffers (PROXY header)
		if rc, err := tc.SyscallConn(); err == nil {
			pc.rc = rc
			pc.takeSock()
			pc.linger = 0 // parks at once after its first answer (parksAtOnce)
		}
	}
	if l.lot != nil {
		pc.fd = socketFD(c)
		pc.unheard.Store(true)
		l.unheard.Add(1)
	}
	return pc
}

// socketFD is the descriptor of the TCP socket under c's wrappers
// (NetConn, as tls.Conn names it), or -1.
func socketFD(c net.Conn) int {
	sc, ok := unwrap(c).(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if err := raw.Control(func(s uintptr) { fd = int(s) }); err != nil {
		return -1
	}
	return fd
}

// unwrap is the connection under c's wrappers (NetConn, as tls.Conn
// names it): the socket.
func unwrap(c net.Conn) net.Conn {
	for {
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return c
		}
		c = w.NetConn()
	}
}

// PeerAddrPort is the client's address and port, as RemoteAddr's
// *net.TCPAddr gives them (the one a PROXY header named, when the
// listener reads them), read once at accept. A server that wants them
// for every request asks here: RemoteAddr's way goes through the
// net.Conn, its netFD and the address object, three more pieces of the
// connection's memory to bring in per request, which under 1,000 busy
// connections are not in the CPU's cache any more.
func (c *Conn) PeerAddrPort() netip.AddrPort { return netip.AddrPortFrom(c.ip, c.port) }

// Idle tells c that its request was answered and the server now waits
// for the next one: the deadline it sets next and the Read after it may
// park the connection. Call it from the serving goroutine.
func (c *Conn) Idle() {
	c.idle, c.fresh = true, false
	c.servingRequest(false)
	_ = c.sendHeld() // an error shows again at the next read or write
}

// Busy tells c that a request's bytes arrived (already buffered by the
// server, as a pipelined one is): reads are the request's again.
func (c *Conn) Busy() {
	c.idle, c.intercepted = false, false
	c.servingRequest(true)
}

// SetReadDeadline, while c waits for a request, keeps t as the time the
// connection may stay idle (parked or not) and waits on a goroutine only
// for the linger time before it. While a request is served, a t later
// than the deadline armed waits until a read needs it (readdeadline.go).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.IdleUntil(t, time.Time{}) }

// IdleUntil is SetReadDeadline for a server that read the clock at now
// (zero: not), which then times the linger from there.
func (c *Conn) IdleUntil(t, now time.Time) error {
	if !c.idle || c.fd < 0 {
		if c.deferRead(t) {
			return nil
		}
		return c.armRead(t)
	}
	c.intercepted, c.parkBy = true, t
	if c.parksAtOnce() {
		return c.armRead(t) // no wait: the request's bytes get the server's deadline
	}
	if now.IsZero() {
		now = time.Now()
	}
	wait := now.Add(c.wait())
	if !t.IsZero() && t.Before(wait) {
		wait = t
	}
	return c.armRead(wait)
}

// wait is how long c's next idle Read waits for a request before it
// parks the connection: its linger, and at least the listener's for a
// connection's first request (its bytes may be on the way as it is
// accepted) or a woken one's.
func (c *Conn) wait() time.Duration {
	if c.fresh {
		return max(c.linger, c.l.cfg.Linger)
	}
	return c.linger
}

// parksAtOnce reports whether c's next idle Read parks c unless the next
// request is already there: a connection after its first answer, never
// parked yet (linger 0, newConn). A client that sends one request and
// keeps the connection idle, as most do, then holds neither a goroutine
// nor buffers while it lingers (at a burst of new connections, hundreds
// of them at once, each with 30 KiB of buffers and stack); one that goes
// on costs one park and wake, after which it lingers as before.
func (c *Conn) parksAtOnce() bool {
	return c.linger == 0 && !c.fresh && c.raw != nil
}

// Read is the connection's: while c waits for a request, a Read that
// finds none within the linger time returns io.EOF to have it parked.
func (c *Conn) Read(p []byte) (int, error) {
	if err := c.sendHeld(); err != nil {
		return 0, err
	}
	if c.held != nil {
		return c.readHeld(p)
	}
	if !c.idle {
		return c.requestRead(p)
	}
	n, err := c.readIdle(p)
	if n > 0 {
		c.heard()
	}
	return n, err
}

// readIdle is Read's while c waits for a request.
func (c *Conn) readIdle(p []byte) (int, error) {
	c.idle = false
	intercepted := c.intercepted
	c.intercepted = false
	if c.fd < 0 || buffered(c.Conn) {
		// Bytes are already here (a PROXY header's read-ahead): no wait,
		// and the request gets the deadline the server asked for.
		if intercepted {
			if err := c.armRead(c.parkBy); err != nil {
				return 0, err
			}
		}
		return c.sock.Read(p)
	}
	if c.yields() {
		return c.yieldPending(intercepted)
	}
	now := c.parksAtOnce()
	if !intercepted { // the server set no deadline: time the linger ourselves
		c.parkBy = time.Time{}
		until := time.Time{}
		if !now {
			until = time.Now().Add(c.wait())
		}
		if err := c.armRead(until); err != nil {
			return 0, err
		}
	}
	var n int
	var err error
	if now {
		if n, err = c.raw.ReadNow(p); n == 0 && err == nil {
			return c.parkPending() // nothing yet
		}
	} else {
		n, err = c.sock.Read(p)
	}
	if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && (c.parkBy.IsZero() || time.Now().Before(c.parkBy)) {
		if n, err = c.readLate(p); n > 0 || err != nil {
			return n, err
		}
		return c.parkPending()
	}
	// A server re-arms the read deadline at a keep-alive request's first
	// byte (fasthttp does), but not at a connection's first request, nor
	// when it set none: the linger deadline must not outlive the wait.
	if n > 0 && (c.fresh || !intercepted) {
		if derr := c.armRead(c.parkBy); derr != nil {
			return n, derr
		}
	}
	return n, err
}

// Write is the connection's, made with raw system calls on a plain TCP
// socket; while a body is announced (WriteBody), writes before it are
// held to go out with it.
func (c *Conn) Write(p []byte) (int, error) {
	if c.vec.body == nil {
		return c.sock.Write(p)
	}
	return c.writeVectored(p)
}

// buffered reports whether a wrapper under c holds bytes already read
// from the socket, which the socket's readiness would not show.
func buffered(c net.Conn) bool {
	b, ok := c.(interface{ Buffered() int })
	return ok && b.Buffered() > 0
}

// ReadFrom keeps the socket's own ReadFrom (sendfile) for writers that
// look for it.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// writerOnly hides ReadFrom so that io.Copy does not call back into it.
type writerOnly struct{ io.Writer }

// NetConn is the connection c wraps.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// Close parks c when its last Read asked for it, and closes it
// otherwise. It may be called from any goroutine, any number of times.
func (c *Conn) Close() error {
	for {
		switch s := c.state.Load(); s {
		case stClosed:
			return nil
		case stParkPending:
			if c.state.CompareAndSwap(s, stParked) {
				c.dropSock()
				c.l.lot.park(c) // closes c when it cannot
				return nil
			}
		case stYielded: // the server's Close after its yield: AwaitRequest's now
			if c.state.CompareAndSwap(s, stAwait) {
				return nil
			}
		case stParked:
			if c.state.CompareAndSwap(s, stClosed) {
				c.l.lot.forget(c)
				return c.closeSocket()
			}
		default:
			if c.state.CompareAndSwap(s, stClosed) {
				return c.closeSocket()
			}
		}
	}
}

// closeSocket closes the connection for good and gives back its place
// under the limits. Only the goroutine that moved c to stClosed calls it.
func (c *Conn) closeSocket() error {
	var err error
	if c.isDetached() {
		err = c.closeDetached()
	} else {
		err = c.Conn.Close()
	}
	c.heard() // nothing more to wait for
	c.l.release(c)
	return err
}

// rearm makes a woken c look freshly accepted to the server that gets
// it next, its linger fitted to how long it slept. The lot calls it
// before handing c out.
func (c *Conn) rearm(now time.Time) {
	c.linger = lingerFor(c.linger, now.Sub(epoch)-c.parkedAt, c.l.cfg)
	c.idle, c.fresh, c.intercepted, c.parkBy = true, true, false, time.Time{}
	c.wdl.forget()
	c.untrackRead()
	if c.rc != nil {
		c.takeSock()
	}
}

// A parked connection holds no Sock: with its two callbacks it is about
// a quarter of the heap an idle connection keeps, and only a connection
// being served reads or writes. The Socks parked connections gave up
// wait here for the next accepted or woken one.
var socks sync.Pool

// takeSock gives c a raw Sock on its socket.
func (c *Conn) takeSock() {
	s, ok := socks.Get().(*rawsock.Sock)
	if ok {
		s.Reset(c.rc)
	} else {
		s = rawsock.Of(c.rc)
	}
	c.sock, c.raw = s, s
}

// dropSock gives c's Sock back as c parks; nothing reads or writes a
// parked connection until the lot wakes it (rearm).
func (c *Conn) dropSock() {
	if c.raw == nil {
		return
	}
	c.raw.Reset(nil)
	socks.Put(c.raw)
	c.sock, c.raw = c.Conn, nil
}

// parkPending has the server let go of c (io.EOF) for the listener to
// park it, unless c was closed meanwhile.
func (c *Conn) parkPending() (int, error) {
	if c.state.CompareAndSwap(stServing, stParkPending) {
		return 0, io.EOF
	}
	return 0, net.ErrClosed
}

// lingerFor is a woken connection's next linger after a park of slept.
// When it slept less than MaxLinger (its client pauses a little longer
// than it lingered, and parking costs it more than waiting would): twice
// the whole pause, linger and sleep, so that one park is enough for a
// client that pauses 100 ms (a core shared with others makes 1,000
// clients wait that long for their turn); at least Linger (a connection
// parked right after its first answer lingered none), at most MaxLinger.
// After a longer sleep: back to Linger.
func lingerFor(linger, slept time.Duration, cfg Config) time.Duration {
	if slept >= cfg.MaxLinger {
		return cfg.Linger
	}
	return min(max(2*(linger+slept), cfg.Linger), cfg.MaxLinger)
}

var (
	_ net.Conn      = (*Conn)(nil)
	_ io.ReaderFrom = (*Conn)(nil)
)
