package conns

import (
	"errors"
	"os"
	"time"
)

// fasthttp moves a keep-alive connection's read deadline twice per
// request: to the idle timeout after its answer (which this package turns
// into the linger, conn.go) and to the header timeout at the next
// request's first byte. Each move is a change of a runtime timer: the
// connection's poll descriptor and its timer, with their locks, and the
// timer heap. Under 1,000 busy connections that memory is no longer in
// the CPU's cache when the next request comes, and the second move buys
// nothing: a request arrives whole in its first read, so no read waits
// for the header deadline.
//
// So while a request is being served (from Busy, fasthttp's StateActive,
// to Idle), a read deadline later than the one armed is noted and not
// armed: the armed one (the linger's, a moment ago) is earlier. A read
// that then fails on the armed deadline before the noted one arms the
// noted one and reads again (requestRead), so a request trickling in
// still gets exactly the deadline the server asked for. An earlier
// deadline is armed at once. Outside a request's service (idle waits,
// HTTP/2 and TLS connections, which call no Busy) every deadline is
// armed as asked.

// readDeadline is the read deadline armed on a Conn's socket and the one
// its server asked for. Kept only on a connection an HTTP/1.1 server
// serves (track: it called Busy), whose deadlines only its serving
// goroutine sets; HTTP/2's may be set from another goroutine (a wake-up)
// and are armed as asked, untracked.
type readDeadline struct {
	armed int64 // unix nanoseconds; 0: none; unknownDeadline
	want  int64 // while lazy: what the server asked, later than armed; 0: none
}

// rdlFlags are readDeadline's flags, kept in Conn beside its other
// flags (padding there).
type rdlFlags struct {
	lazy  bool // want is not armed (in a request's service only)
	req   bool // a request is being served (Busy to Idle): later deadlines may wait
	track bool // armed is kept (since the first Busy)
}

// armRead arms t as c's read deadline.
func (c *Conn) armRead(t time.Time) error {
	d := &c.rdl
	if !c.track {
		return c.Conn.SetReadDeadline(t)
	}
	c.lazy = false
	if err := c.Conn.SetReadDeadline(t); err != nil {
		d.armed = unknownDeadline
		return err
	}
	d.armed = unixNano(t)
	return nil
}

// deferRead notes t instead of arming it when c serves a request and the
// deadline armed is earlier: reports whether it did.
func (c *Conn) deferRead(t time.Time) bool {
	d := &c.rdl
	if !c.req || c.raw == nil || d.armed == 0 || d.armed == unknownDeadline {
		return false
	}
	at := unixNano(t)
	if at != 0 && at < d.armed {
		return false
	}
	d.want, c.lazy = at, true
	return true
}

// requestRead is a read of a request's bytes: when it failed on the armed
// deadline while a later one was asked for, that one is armed and the
// read made again.
func (c *Conn) requestRead(p []byte) (int, error) {
	n, err := c.sock.Read(p)
	if n != 0 || !c.lazy || !errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	var want time.Time
	if c.rdl.want != 0 {
		want = time.Unix(0, c.rdl.want)
	}
	if err := c.armRead(want); err != nil {
		return 0, err
	}
	return c.sock.Read(p)
}

// servingRequest starts (Busy) or ends (Idle) a request's service,
// within which later read deadlines may wait. The first start begins
// tracking the armed deadline, unknown until the next one is armed.
func (c *Conn) servingRequest(on bool) {
	c.req = on
	if on && !c.track {
		c.track, c.rdl.armed = true, unknownDeadline
	}
}

// untrackRead forgets the read deadline: both directions were set at
// once (a hijacked or handed-over connection's), or the socket changed
// (a wake).
func (c *Conn) untrackRead() {
	if c.track {
		c.rdl, c.rdlFlags = readDeadline{}, rdlFlags{}
	}
}
