package conns

import (
	"bufio"
	"net"
	"testing"
	"time"
)

func TestLingerCoversTwiceThePauseAfterAShortParkAndResetsAfterALongOne(t *testing.T) {
	cfg := Config{Linger: 20 * time.Millisecond, MaxLinger: time.Second}
	cases := []struct {
		linger, slept, want time.Duration
	}{
		{20 * time.Millisecond, 0, 40 * time.Millisecond},                       // woken at once: doubled
		{20 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond},  // a 50 ms pause
		{20 * time.Millisecond, 100 * time.Millisecond, 240 * time.Millisecond}, // one park covers a 120 ms pause
		{640 * time.Millisecond, 700 * time.Millisecond, time.Second},           // capped
		{time.Second, 900 * time.Millisecond, time.Second},
		{time.Second, 5 * time.Second, 20 * time.Millisecond}, // idle for long: parks early again
		{40 * time.Millisecond, time.Second, 20 * time.Millisecond},
		{0, time.Millisecond, 20 * time.Millisecond}, // parked at once after its first answer: lingers from then on
		{0, 5 * time.Second, 20 * time.Millisecond},
	}
	for _, c := range cases {
		if got := lingerFor(c.linger, c.slept, cfg); got != c.want {
			t.Errorf("lingerFor(%v, slept %v) = %v, want %v", c.linger, c.slept, got, c.want)
		}
	}
}

// TestAClientThatPausesALittleStopsBeingParked: a client pausing 30 ms
// between requests, against a 5 ms linger, is parked and woken only
// until its connection's linger has grown past the pause.
func TestAClientThatPausesALittleStopsBeingParked(t *testing.T) {
	l, client := echoClient(t)
	br := bufio.NewReader(client)
	const requests = 10
	for i := range requests {
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := br.ReadByte(); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		time.Sleep(30 * time.Millisecond) // the client's pause is what is tested
	}
	parks := l.Stats().Parks
	if parks == 0 || parks > requests-4 {
		t.Fatalf("%d parks over %d pauses of 30 ms, want a few (5, 10, 20 ms lingers) and then none", parks, requests)
	}
}

// TestAClientThatPausesLongerThanTheLingerIsParkedOnce: a client
// pausing 60 ms between requests, against a 5 ms linger, is parked once:
// the linger its wake gives covers twice the pause it saw (it took five
// parks while the linger only doubled: at 5, 10, 20 and 40 ms).
func TestAClientThatPausesLongerThanTheLingerIsParkedOnce(t *testing.T) {
	l, client := echoClient(t)
	br := bufio.NewReader(client)
	const requests = 8
	for i := range requests {
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := br.ReadByte(); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		time.Sleep(60 * time.Millisecond) // the client's pause is what is tested
	}
	if parks := l.Stats().Parks; parks != 1 {
		t.Fatalf("%d parks over %d pauses of 60 ms, want 1", parks, requests)
	}
}

// echoClient is a client of serveEcho, and its listener, on a listener lingering 5 ms, at
// most a second.
func echoClient(t *testing.T) (*Listener, net.Conn) {
	t.Helper()
	l, addr := lingerListener(t, 5*time.Millisecond, time.Second)
	go serveEcho(l)
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return l, client
}

// serveEcho serves l as an HTTP server would for parking: idle between
// one-byte requests, each answered with one byte; an io.EOF from an
// idle Read ends the connection's goroutine through Close (which parks).
func serveEcho(l *Listener) { serveBytes(l, time.Minute, func(b byte) byte { return b }) }

// serveBytes is serveEcho with idle as the idle timeout and each byte
// answered with answer's.
func serveBytes(l *Listener, idle time.Duration, answer func(byte) byte) {
	for {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		go func(c *Conn) {
			defer c.Close()
			buf := make([]byte, 1)
			for first := true; ; first = false {
				if !first { // as fasthttp: idle after an answer (StateIdle), not at accept
					c.Idle()
				}
				if err := c.SetReadDeadline(time.Now().Add(idle)); err != nil {
					return
				}
				if _, err := c.Read(buf); err != nil {
					return
				}
				c.Busy()
				buf[0] = answer(buf[0])
				if _, err := c.Write(buf); err != nil {
					return
				}
			}
		}(nc.(*Conn))
	}
}
