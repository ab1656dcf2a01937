package conns

import (
	"io"
	"net"
	"testing"
	"time"
)

// longLingerListener parks connections only after a 10 s linger, but
// for parksAtOnce.
func longLingerListener(t *testing.T) (*Listener, net.Conn, *Conn) {
	t.Helper()
	l, addr := lingerListener(t, 10*time.Second, 20*time.Second)
	client, c := dialAccepted(t, l, addr)
	return l, client, c
}

// answer reads one byte of c's request as a server's first read would
// (no Idle before it), answers it and tells c it is idle.
func answer(t *testing.T, c *Conn) byte {
	t.Helper()
	buf := make([]byte, 1)
	if _, err := c.Read(buf); err != nil {
		t.Fatalf("request: %v", err)
	}
	c.Busy()
	if _, err := c.Write(buf); err != nil {
		t.Fatal(err)
	}
	c.Idle()
	return buf[0]
}

// TestAConnectionIsParkedRightAfterItsFirstAnswer: a client that sends
// one request and keeps its connection idle has it parked as soon as it
// is answered, not after the linger (10 s here), so that a burst of such
// clients holds no goroutine or buffers each while they linger; woken by
// its next request, the connection lingers as before.
func TestAConnectionIsParkedRightAfterItsFirstAnswer(t *testing.T) {
	l, client, c := longLingerListener(t)
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	answer(t, c)
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil { // the idle timeout, as fasthttp sets it
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle Read after the first answer: %v, want io.EOF (park)", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("parked after %v: it lingered", waited)
	}
	wakeParked(t, l, client, c)
	if got := answer(t, c); got != 'b' {
		t.Fatalf("woken connection read %q, want b", got)
	}
	if err := readAfterPause(c, client); err != nil {
		t.Fatalf("a woken connection's idle Read: %v, want the next request (it lingers)", err)
	}
	wantParks(t, l, 1)
}

// TestANextRequestAlreadyThereIsReadWithoutParking: after the first
// answer, a request the client already sent is read at once.
func TestANextRequestAlreadyThereIsReadWithoutParking(t *testing.T) {
	l, client, c := longLingerListener(t)
	defer c.Close()
	if _, err := client.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	if got := answer(t, c); got != 'a' {
		t.Fatalf("first request %q, want a", got)
	}
	if got := answer(t, c); got != 'b' {
		t.Fatalf("second request %q, want b", got)
	}
	wantParks(t, l, 0)
}

// TestAFreshConnectionWaitsTheLingerForItsFirstRequest: a connection
// whose first request is on its way as it is accepted is not parked
// for it.
func TestAFreshConnectionWaitsTheLingerForItsFirstRequest(t *testing.T) {
	l, client, c := longLingerListener(t)
	defer c.Close()
	if err := readAfterPause(c, client); err != nil { // the request's bytes come a little after the accept
		t.Fatalf("first Read: %v, want the request", err)
	}
	wantParks(t, l, 0)
}

// readAfterPause is c's Read of a byte the client sends 50 ms after the
// Read began: a pause shorter than the linger.
func readAfterPause(c *Conn, client net.Conn) error {
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		read <- err
	}()
	time.Sleep(50 * time.Millisecond) // the client's pause is what is tested
	if _, err := client.Write([]byte("x")); err != nil {
		return err
	}
	return <-read
}

func wantParks(t *testing.T, l *Listener, n uint64) {
	t.Helper()
	if s := l.Stats(); s.Parks != n {
		t.Fatalf("%d parks, want %d", s.Parks, n)
	}
}
