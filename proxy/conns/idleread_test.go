package conns

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestAnIdleReadLetsWaitingGoroutinesRunFirstOnEveryOtherRequest: on one
// P, a goroutine that became runnable before a keep-alive connection's
// idle Read (as other connections' servers and the next request's arrival
// do on a busy server) runs before the Read's first system call on every
// other request, so the request it sends is found by that read: no read
// that finds the socket empty and waits. Without the yield every round's
// first read is empty; with a yield on every request none would be, and
// the scheduler would never find its run queue empty to poll the network
// (yield.go). The scheduler's fairness check (one schedule in 61 takes the
// global queue first) may move a round either way.
func TestAnIdleReadLetsWaitingGoroutinesRunFirstOnEveryOtherRequest(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	l, client, c := longLingerListener(t)
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	answer(t, c)
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the idle Read after the first answer found a request none sent")
	}
	wakeParked(t, l, client, c)
	answer(t, c)

	const rounds = 20
	empty := 0
	buf := make([]byte, 1)
	for i := range rounds {
		sent := make(chan error, 1)
		go func() { // runnable, not yet run: one P, and this goroutine does not block before Read
			_, err := client.Write([]byte{byte('0' + i%10)})
			sent <- err
		}()
		before := c.raw.EmptyReads()
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("round %d: idle Read: %v", i, err)
		}
		if c.raw.EmptyReads() != before {
			empty++
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		echoAnswer(t, c, client, buf)
	}
	if empty > rounds/2+3 {
		t.Fatalf("%d of %d idle Reads found the socket empty before the request a runnable goroutine sends: they did not let it run first", empty, rounds)
	}
	if empty < rounds/2-3 {
		t.Fatalf("only %d of %d idle Reads looked before letting the waiting goroutines run: yielding on every request keeps the scheduler from polling the network", empty, rounds)
	}
}

// TestAKeepAliveRequestFoundAtOnceArmsNoDeadlineForTheWait: the idle
// deadline fasthttp sets after an answer becomes the linger's only when
// the next Read finds the socket empty; a request already there is read
// without moving the socket's timer. A connection that does wait still
// parks after its linger, long before the server's idle deadline.
func TestAKeepAliveRequestFoundAtOnceArmsNoDeadlineForTheWait(t *testing.T) {
	l, addr := lingerListener(t, 50*time.Millisecond, 200*time.Millisecond)
	client, c := dialAccepted(t, l, addr)
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	answer(t, c)
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle Read after the first answer: %v, want io.EOF (park)", err)
	}
	wakeParked(t, l, client, c)
	answer(t, c)

	unarmed := 0
	buf := make([]byte, 1)
	for _, req := range []byte("cd") { // one of two idle Reads yields first (yield.go)
		if _, err := client.Write([]byte{req}); err != nil {
			t.Fatal(err)
		}
		armed := c.rdl.armed
		if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil { // the idle timeout, as fasthttp sets it
			t.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil || buf[0] != req {
			t.Fatalf("idle Read: %q, %v; want the request already sent, %q", buf, err, req)
		}
		if c.rdl.armed == armed {
			unarmed++
		}
		echoAnswer(t, c, client, buf)
	}
	if unarmed == 0 {
		t.Fatal("a read deadline was armed for each wait, though the request was there when the yielding Read looked")
	}

	if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("idle Read with no request: %v, want io.EOF (park after the linger)", err)
	}
	if waited := time.Since(start); waited > 30*time.Second {
		t.Fatalf("parked after %v: the linger's deadline was not armed", waited)
	}
}

// echoAnswer answers the request c read into buf with the same byte, as
// a server does (Busy, the answer, Idle), and has the client read it.
func echoAnswer(t *testing.T, c *Conn, client net.Conn, buf []byte) {
	t.Helper()
	c.Busy()
	if _, err := c.Write(buf); err != nil {
		t.Fatal(err)
	}
	c.Idle()
	if _, err := client.Read(buf); err != nil {
		t.Fatal(err)
	}
}
