package conns

import (
	"io"
	"net"
	"testing"
	"time"
)

// echoServe is a ServeRequests serve that answers each request held with
// its own bytes, as the lane answers a hit, and lets go of the
// connection at a request "stop", leaving it held.
func echoServe(c *Conn) func() bool {
	return func() bool {
		req := string(c.Held())
		if req == "stop" {
			return false
		}
		c.Consume(len(req))
		if _, err := c.Write([]byte(req)); err != nil {
			return false
		}
		c.Idle()
		return c.SetReadDeadline(time.Now().Add(time.Minute)) == nil
	}
}

// exchange has client send msg and read it back.
func exchange(t *testing.T, client net.Conn, msg string) {
	t.Helper()
	if _, err := client.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != msg {
		t.Fatalf("answer %q, %v; want %q", got, err, msg)
	}
}

// wantServed waits for ServeRequests' result on done, which must be
// want (true: serve let go of the connection; false: parked or closed).
func wantServed(t *testing.T, done <-chan bool, want bool, when string) {
	t.Helper()
	select {
	case ok := <-done:
		if ok != want {
			t.Fatalf("ServeRequests reported %v %s, want %v", ok, when, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("ServeRequests did not return %s", when)
	}
}

// lingering is a connection woken once (it lingers from then on), with
// its client.
func lingering(t *testing.T, linger time.Duration) (*Listener, net.Conn, *Conn) {
	t.Helper()
	l, client, c := yieldListener(t, linger)
	firstAnswer(t, client, c)
	if NewAwaiter(c).AwaitRequest() {
		t.Fatal("a request the client never sent")
	}
	wakeWith(t, l, client, c, "b")
	got := make([]byte, 2)
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "ab" {
		t.Fatalf("answers %q, %v; want ab", got, err)
	}
	return l, client, c
}

// TestServeRequestsAnswersARunOfRequestsUntilServeLetsGo: each request
// is answered as it comes, and the one serve declines is the caller's,
// held.
func TestServeRequestsAnswersARunOfRequestsUntilServeLetsGo(t *testing.T) {
	l, client, c := lingering(t, 10*time.Second)
	done := make(chan bool, 1)
	go func() { done <- NewAwaiter(c).ServeRequests(echoServe(c)) }()
	for _, msg := range []string{"c", "de", "f"} {
		exchange(t, client, msg)
	}
	if _, err := client.Write([]byte("stop")); err != nil {
		t.Fatal(err)
	}
	wantServed(t, done, true, "when serve let go")
	if got := string(c.Held()); got != "stop" {
		t.Fatalf("held %q, want stop", got)
	}
	wantParks(t, l, 1)
}

// TestServeRequestsParksAfterAFirstAnswer: a connection answered for the
// first time parks at once unless its next request is already there, as
// with AwaitRequest.
func TestServeRequestsParksAfterAFirstAnswer(t *testing.T) {
	l, client, c := yieldListener(t, 10*time.Second)
	yieldFresh(t, c)
	done := make(chan bool, 1)
	go func() { done <- NewAwaiter(c).ServeRequests(echoServe(c)) }()
	exchange(t, client, "a")
	wantServed(t, done, false, "after a first answer: it lingered")
	wantParks(t, l, 1)
	wakeWith(t, l, client, c, "b")
}

// TestInterruptEndsServeRequestsWithTheConnectionClosed: a stop ends a
// wait that began inside the last answer's.
func TestInterruptEndsServeRequestsWithTheConnectionClosed(t *testing.T) {
	_, client, c := lingering(t, 10*time.Second)
	a := NewAwaiter(c)
	done := make(chan bool, 1)
	go func() { done <- a.ServeRequests(echoServe(c)) }()
	exchange(t, client, "c") // the next wait is within the first's
	a.Interrupt()
	wantServed(t, done, false, "at Interrupt")
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := io.ReadAll(client); err != nil || len(got) != 0 {
		t.Fatalf("client read %q, %v; want the connection closed", got, err)
	}
}

// TestServeRequestsLingersThenParks: with no next request the wait
// within the last answer's ends at the linger, and the connection parks.
func TestServeRequestsLingersThenParks(t *testing.T) {
	l, client, c := lingering(t, 50*time.Millisecond)
	done := make(chan bool, 1)
	go func() { done <- NewAwaiter(c).ServeRequests(echoServe(c)) }()
	exchange(t, client, "c")
	wantServed(t, done, false, "at the linger's end")
	wantParks(t, l, 2)
	wakeWith(t, l, client, c, "d")
}

// TestANextRequestThatComesWhileOthersRunKeepsTheConnectionUnparked: a
// connection after its first answer gives the goroutines ready to run
// their turn before it parks; a request that comes meanwhile (a busy
// client's, on a core with many connections to serve) is answered
// without a park and wake, and the connection lingers from then on.
func TestANextRequestThatComesWhileOthersRunKeepsTheConnectionUnparked(t *testing.T) {
	l, client, c := yieldListener(t, 10*time.Second)
	turns := 0
	l.othersRun = func() {
		turns++
		if turns == 1 {
			// on loopback the bytes are in the server's socket when Write returns
			if _, err := client.Write([]byte("b")); err != nil {
				t.Error(err)
			}
		}
	}
	yieldFresh(t, c)
	done := make(chan bool, 1)
	go func() { done <- NewAwaiter(c).ServeRequests(echoServe(c)) }()
	exchange(t, client, "a")
	got := make([]byte, 1)
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "b" {
		t.Fatalf("answer %q, %v; want b, the request sent while others ran", got, err)
	}
	exchange(t, client, "c") // lingering now: within the wait, no turn given
	if _, err := client.Write([]byte("stop")); err != nil {
		t.Fatal(err)
	}
	wantServed(t, done, true, "when serve let go")
	wantParks(t, l, 0)
	if turns != 1 {
		t.Fatalf("%d turns given to others, want 1 (after the first answer only)", turns)
	}
}
