package conns

import (
	"math"
	"sync"
	"time"
)

// The server sets a write deadline before every response (fasthttp:
// now + WriteTimeout), and each is a change of a runtime timer, with its
// locks and heap, for a deadline that almost never fires. A deadline
// later than the one armed by less than its slack (an eighth of the time
// it leaves, at most writeSlack) keeps the armed one: on a busy
// connection the timer moves about once per writeSlack instead of once
// per response, and a write times out at most writeSlack, and at most an
// eighth of the time asked, before the deadline the server asked for. An
// earlier deadline, or none, is armed at once.
const writeSlack = 250 * time.Millisecond

// writeDeadline is the write deadline armed on a Conn's socket. Its own
// mutex: HTTP/2's writer and its closer may set it from two goroutines.
type writeDeadline struct {
	mu    sync.Mutex
	armed int64 // unix nanoseconds; 0: none; unknownDeadline
}

// unknownDeadline: the socket's write deadline is not known (a woken
// connection's); whatever comes next is armed.
const unknownDeadline = math.MinInt64

// SetWriteDeadline arms t on the socket unless the deadline armed is
// less than writeSlack before it.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	d := &c.wdl
	d.mu.Lock()
	defer d.mu.Unlock()
	at := unixNano(t)
	if keep(d.armed, at, slackFor(t)) {
		return nil
	}
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	d.armed = at
	return nil
}

// forget makes the next write deadline armed whatever it is: a woken
// connection's socket may not be the one the deadline was armed on.
func (d *writeDeadline) forget() {
	d.mu.Lock()
	d.armed = unknownDeadline
	d.mu.Unlock()
}

// SetDeadline is the connection's, noting the deadlines it arms.
func (c *Conn) SetDeadline(t time.Time) error {
	d := &c.wdl
	d.mu.Lock()
	defer d.mu.Unlock()
	c.untrackRead()
	if err := c.Conn.SetDeadline(t); err != nil {
		return err
	}
	d.armed = unixNano(t)
	return nil
}

// keep reports whether the deadline armed stands for t: both none, or t
// no earlier than armed and less than slack after it.
func keep(armed, t, slack int64) bool {
	if armed == unknownDeadline {
		return false
	}
	if armed == 0 || t == 0 {
		return armed == t
	}
	late := t - armed
	return late >= 0 && late < slack
}

// slackFor is how much later than the armed deadline t may be and keep
// it: an eighth of the time left until t, at most writeSlack.
func slackFor(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return int64(min(writeSlack, time.Until(t)/8))
}

// unixNano is t in unix nanoseconds, 0 for the zero time (none).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
