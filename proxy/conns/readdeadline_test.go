package conns

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// servingConn is a connection accepted by a listener that lingers 10 s,
// with a request being served (Busy) and a read deadline armed 100 ms
// away, as the linger's is while a keep-alive request is served.
func servingConn(t *testing.T) (net.Conn, *Conn) {
	t.Helper()
	_, client, c := longLingerListener(t)
	c.Busy()
	if err := c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	return client, c
}

// socketRead reads a byte from c's socket itself, under the deadline
// armed there, on a goroutine: its error comes on the channel.
func socketRead(c *Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.NetConn().Read(make([]byte, 1))
		done <- err
	}()
	return done
}

// TestALaterReadDeadlineInARequestIsNotArmedOnTheSocket: while a request
// is served, a read deadline later than the one armed (fasthttp's header
// timeout at a keep-alive request's first byte) leaves the socket's timer
// as it is: a read on the socket itself still ends at the earlier one.
func TestALaterReadDeadlineInARequestIsNotArmedOnTheSocket(t *testing.T) {
	_, c := servingConn(t)
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-socketRead(c):
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the socket's read: %v, want the armed deadline's timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the socket's read still waits 5 s on: the later deadline was armed")
	}
}

// TestARequestReadOutlastingTheArmedDeadlineGetsTheOneAskedFor: bytes
// that come after the armed deadline but before the one the server asked
// for are read, not a timeout.
func TestARequestReadOutlastingTheArmedDeadlineGetsTheOneAskedFor(t *testing.T) {
	client, c := servingConn(t)
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		read <- err
	}()
	time.Sleep(300 * time.Millisecond) // past the armed deadline: the trickling client is what is tested
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatalf("read: %v, want the byte sent within the deadline asked for", err)
	}
}

// TestARequestReadTimesOutAtTheDeadlineAskedFor: the deadline the server
// asked for still ends a read that gets nothing, at that time, not at the
// armed one before it.
func TestARequestReadTimesOutAtTheDeadlineAskedFor(t *testing.T) {
	_, c := servingConn(t)
	asked := time.Now().Add(400 * time.Millisecond)
	if err := c.SetReadDeadline(asked); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(make([]byte, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v, want a timeout", err)
	}
	if early := time.Until(asked); early > 0 {
		t.Fatalf("timed out %v before the deadline asked for", early)
	}
}

// TestAnEarlierReadDeadlineInARequestIsArmedAtOnce: a deadline earlier
// than the one armed (a handler's, a read to interrupt) is the socket's
// at once.
func TestAnEarlierReadDeadlineInARequestIsArmedAtOnce(t *testing.T) {
	_, c := servingConn(t)
	if err := c.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.NetConn().Read(make([]byte, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 50*time.Millisecond {
		t.Fatalf("the socket's read: %v after %v, want a timeout at once", err, time.Since(start))
	}
}

// TestOutsideARequestEveryReadDeadlineIsArmed: on a connection no
// HTTP/1.1 server marked busy (an HTTP/2 one after the sniffer's read,
// whose server waits on the socket itself), a later deadline is armed as
// asked.
func TestOutsideARequestEveryReadDeadlineIsArmed(t *testing.T) {
	_, client, c := longLingerListener(t)
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-socketRead(c):
		t.Fatalf("the socket's read ended (%v): the later deadline was not armed", err)
	case <-time.After(300 * time.Millisecond):
	}
}
