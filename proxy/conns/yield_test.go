package conns

import (
	"io"
	"net"
	"testing"
	"time"
)

// yieldListener is a parking listener whose connections yield, with a
// linger of linger, and a client connected to it and accepted.
func yieldListener(t *testing.T, linger time.Duration) (*Listener, net.Conn, *Conn) {
	t.Helper()
	l, addr := lingerListener(t, linger, 2*linger)
	l.cfg.Yield = true
	client, c := dialAccepted(t, l, addr)
	return l, client, c
}

// yieldFresh has a server's first Read of fresh connection c let go of
// it, as fasthttp's would: io.EOF at once, and its Close keeps the
// socket for AwaitRequest.
func yieldFresh(t *testing.T, c *Conn) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil { // the header timeout, as fasthttp sets it
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle Read: %v, want io.EOF (yield)", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !c.Yielded() {
		t.Fatal("the server's Close after its yield closed the connection")
	}
}

// serveHeld answers the request AwaitRequest found as the lane does
// (package h1): takes it, writes an answer, and waits for the next with
// the idle timeout.
func serveHeld(t *testing.T, c *Conn) string {
	t.Helper()
	req := string(c.Held())
	c.Consume(len(req))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	c.Idle()
	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	return req
}

// wakeWith has the client of parked connection c send msg and takes c
// back from l's Accept, woken, and yields it as fasthttp would (a woken
// connection looks fresh) and answers msg in the lane's way.
func wakeWith(t *testing.T, l *Listener, client net.Conn, c *Conn, msg string) {
	t.Helper()
	if _, err := client.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if woken, err := l.Accept(); err != nil || woken != c {
		t.Fatalf("Accept: %v, %v; want the parked connection", woken, err)
	}
	yieldFresh(t, c)
	if !NewAwaiter(c).AwaitRequest() {
		t.Fatal("AwaitRequest: no request on a woken connection")
	}
	if got := serveHeld(t, c); got != msg {
		t.Fatalf("request %q, want %q", got, msg)
	}
}

// firstAnswer yields fresh connection c, has its client send a and
// answers it in the lane's way.
func firstAnswer(t *testing.T, client net.Conn, c *Conn) {
	t.Helper()
	yieldFresh(t, c)
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if !NewAwaiter(c).AwaitRequest() {
		t.Fatal("AwaitRequest: no first request")
	}
	if got := serveHeld(t, c); got != "a" {
		t.Fatalf("first request %q, want a", got)
	}
}

// TestAYieldedConnectionsNextRequestIsHeldForItsNextServer: the request
// a yielded connection gets is read by AwaitRequest into a pooled
// buffer, and the next server's Reads get it, after what the caller
// consumed.
func TestAYieldedConnectionsNextRequestIsHeldForItsNextServer(t *testing.T) {
	l, client, c := yieldListener(t, 10*time.Second)
	firstAnswer(t, client, c)
	if _, err := client.Write([]byte("bcd")); err != nil {
		t.Fatal(err)
	}
	if !NewAwaiter(c).AwaitRequest() {
		t.Fatal("AwaitRequest: no request, want bcd")
	}
	if got := string(c.Held()); got != "bcd" {
		t.Fatalf("held %q, want bcd", got)
	}
	c.Consume(1)
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "cd" {
		t.Fatalf("Read %q, %v; want cd", buf[:n], err)
	}
	if len(c.Held()) != 0 {
		t.Fatalf("still held: %q", c.Held())
	}
	wantParks(t, l, 0)
}

// TestAYieldedConnectionWithoutANextRequestParksAfterItsFirstAnswer: as
// without yielding, a connection after its first answer parks at once.
func TestAYieldedConnectionWithoutANextRequestParksAfterItsFirstAnswer(t *testing.T) {
	l, client, c := yieldListener(t, 10*time.Second)
	firstAnswer(t, client, c)
	start := time.Now()
	if NewAwaiter(c).AwaitRequest() {
		t.Fatal("AwaitRequest found a request the client never sent")
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("parked after %v: it lingered", waited)
	}
	wantParks(t, l, 1)
	wakeWith(t, l, client, c, "b")
}

// TestAwaitRequestLingersThenParks: a connection that lingers (woken
// once) waits its linger for the next request, then parks.
func TestAwaitRequestLingersThenParks(t *testing.T) {
	l, client, c := yieldListener(t, 50*time.Millisecond)
	firstAnswer(t, client, c)
	if NewAwaiter(c).AwaitRequest() {
		t.Fatal("a request the client never sent")
	}
	wakeWith(t, l, client, c, "b") // the connection now lingers
	start := time.Now()
	if NewAwaiter(c).AwaitRequest() {
		t.Fatal("a request the client never sent")
	}
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Fatalf("parked after %v, before its linger", waited)
	}
	wantParks(t, l, 2)
}

// TestInterruptEndsAnAwaitWithTheConnectionClosed: a server stopping
// does not wait out a connection's linger.
func TestInterruptEndsAnAwaitWithTheConnectionClosed(t *testing.T) {
	l, client, c := yieldListener(t, 10*time.Second)
	firstAnswer(t, client, c)
	if NewAwaiter(c).AwaitRequest() {
		t.Fatal("a request the client never sent")
	}
	wakeWith(t, l, client, c, "b") // lingers 10 s from now on
	got := make(chan bool, 1)
	a := NewAwaiter(c)
	go func() { got <- a.AwaitRequest() }()
	for !a.awaiting.Load() {
		time.Sleep(time.Millisecond) // until the wait began
	}
	a.Interrupt()
	select {
	case ok := <-got:
		if ok {
			t.Fatal("AwaitRequest reported a request")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Interrupt did not end the wait")
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := io.ReadAll(client); err != nil || string(got) != "ab" {
		t.Fatalf("client read %q, %v; want the two answers, then the connection closed", got, err)
	}
	if NewAwaiter(c).AwaitRequest() {
		t.Fatal("AwaitRequest on a closed connection")
	}
}
