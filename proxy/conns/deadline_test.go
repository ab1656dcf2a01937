package conns

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestWriteDeadlineKeepsTheArmedOneOnlyWhenLaterByLessThanTheSlack(t *testing.T) {
	base, slack := time.Now().UnixNano(), int64(writeSlack)
	for _, tc := range []struct {
		name        string
		armed, next int64
		keep        bool
	}{
		{"none, none", 0, 0, true},
		{"none, then one", 0, base, false},
		{"one, then none", base, 0, false},
		{"the same", base, base, true},
		{"later within the slack", base, base + slack - 1, true},
		{"later by the slack", base, base + slack, false},
		{"earlier", base, base - 1, false},
		{"not known", unknownDeadline, base, false},
		{"not known, then none", unknownDeadline, 0, false},
	} {
		if got := keep(tc.armed, tc.next, slack); got != tc.keep {
			t.Errorf("%s: keep = %v, want %v", tc.name, got, tc.keep)
		}
	}
}

func TestWriteSlackIsAnEighthOfTheTimeLeftAtMost(t *testing.T) {
	if got := slackFor(time.Now().Add(time.Minute)); got != int64(writeSlack) {
		t.Errorf("slack of a minute's deadline: %v, want %v", time.Duration(got), writeSlack)
	}
	if got := slackFor(time.Now().Add(800 * time.Millisecond)); got > int64(100*time.Millisecond) || got < int64(90*time.Millisecond) {
		t.Errorf("slack of an 800 ms deadline: %v, want about 100 ms", time.Duration(got))
	}
	if got := slackFor(time.Now().Add(-time.Second)); got > 0 {
		t.Errorf("slack of a deadline past: %v, want none", time.Duration(got))
	}
	if got := slackFor(time.Time{}); got != 0 {
		t.Errorf("slack of no deadline: %v, want none", time.Duration(got))
	}
}

// TestShortWriteDeadlineIsArmedWhenLater: a deadline a little later than
// a short one armed is armed, not kept: the write gets about the time it
// asked for, not what is left of the one before.
func TestShortWriteDeadlineIsArmedWhenLater(t *testing.T) {
	c, _ := tcpConn(t)
	if err := c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.SetWriteDeadline(start.Add(200 * time.Millisecond)); err != nil { // later by less than writeSlack
		t.Fatal(err)
	}
	took, err := blockedWrite(c)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blocked write ended with %v after %v, want the deadline's error", err, took)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("the write timed out after %v, want about 200 ms", d)
	}
}

// blockedWrite fills c's socket (its client reads nothing) until a write
// fails, and returns the error and how long it took. A write still
// blocked after 3 s has no deadline: blockedWrite closes c to end it and
// reports errNoDeadline.
func blockedWrite(c *Conn) (time.Duration, error) {
	chunk := pattern(1 << 20)
	start := time.Now()
	stop := time.AfterFunc(3*time.Second, func() { c.Close() })
	defer stop.Stop()
	for {
		if _, err := c.Write(chunk); err != nil {
			if time.Since(start) >= 3*time.Second {
				return time.Since(start), errNoDeadline
			}
			return time.Since(start), err
		}
	}
}

var errNoDeadline = errors.New("the write blocked past 3 s: no deadline")

func TestEarlierWriteDeadlineIsArmedAtOnce(t *testing.T) {
	c, _ := tcpConn(t)
	if err := c.SetWriteDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	took, err := blockedWrite(c)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blocked write ended with %v after %v, want the deadline's error", err, took)
	}
	if took > 5*time.Second {
		t.Errorf("the write timed out after %v: the earlier deadline was not armed", took)
	}
}

func TestWriteDeadlineAfterAnExpiredOneIsArmed(t *testing.T) {
	c, client := tcpConn(t)
	if err := c.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past its deadline: %v, want the deadline's error", err)
	}
	// The next response's deadline is far later than the expired one.
	if err := c.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("y")); err != nil {
		t.Fatalf("write under a new deadline: %v", err)
	}
	got := make([]byte, 1)
	if _, err := client.Read(got); err != nil || got[0] != 'y' {
		t.Fatalf("client read %q, %v; want y", got, err)
	}
}

func TestNoWriteDeadlineClearsTheArmedOne(t *testing.T) {
	c, _ := tcpConn(t)
	if err := c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := blockedWrite(c); !errors.Is(err, errNoDeadline) {
		t.Fatalf("a write without a deadline ended with %v", err)
	}
}

// TestWokenConnectionArmsItsNextWriteDeadline: a connection the lot
// wakes may have another socket under it than the one its last deadline
// was armed on (a detached park), so the next deadline is armed even
// when it is within the slack of the one noted.
func TestWokenConnectionArmsItsNextWriteDeadline(t *testing.T) {
	c, _ := tcpConn(t)
	at := time.Now().Add(100 * time.Millisecond)
	if err := c.SetWriteDeadline(at); err != nil {
		t.Fatal(err)
	}
	if err := c.Conn.SetWriteDeadline(time.Time{}); err != nil { // the socket it wakes with has none
		t.Fatal(err)
	}
	c.rearm(time.Now())
	if err := c.SetWriteDeadline(at.Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	took, err := blockedWrite(c)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blocked write ended with %v after %v, want the deadline's error", err, took)
	}
}

func TestSetDeadlineArmsTheWriteDeadlineItNotes(t *testing.T) {
	c, _ := tcpConn(t)
	if err := c.SetDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// Later within the slack of the deadline SetDeadline armed: kept.
	if err := c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	took, err := blockedWrite(c)
	if !errors.Is(err, os.ErrDeadlineExceeded) || took > 5*time.Second {
		t.Fatalf("blocked write ended with %v after %v, want the deadline's error at once", err, took)
	}
}

// BenchmarkSetWriteDeadline is the per-response write deadline fasthttp
// sets (now + WriteTimeout) on a busy connection.
func BenchmarkSetWriteDeadline(b *testing.B) {
	c, _ := tcpConn(&testing.T{})
	for b.Loop() {
		if err := c.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
}
