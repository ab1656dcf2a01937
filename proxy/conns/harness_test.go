package conns

import (
	"io"
	"log/slog"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// lingerListener is a parking listener on a loopback port with these
// lingers, closed at the test's end, and its address. Without epoll
// (not Linux) the test is skipped.
func lingerListener(t *testing.T, linger, maxLinger time.Duration) (*Listener, string) {
	t.Helper()
	return configListener(t, Config{Name: "test", Park: true, Linger: linger, MaxLinger: maxLinger})
}

// configListener is lingerListener with the whole configuration.
func configListener(t *testing.T, cfg Config) (*Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(inner, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { l.Close() })
	if l.lot == nil {
		if runtime.GOOS == "linux" {
			t.Fatal("no lot on Linux: parking should work here")
		}
		testbed.Skip(t, "parking needs epoll (Linux)")
	}
	return l, inner.Addr().String()
}

// dialAccepted connects a client to l at addr and accepts it: the
// client's end and l's, both closed at the test's end.
func dialAccepted(t *testing.T, l *Listener, addr string) (net.Conn, *Conn) {
	t.Helper()
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return client, nc.(*Conn)
}

// wakeParked parks c (its last Read asked for it), has its client send
// "b" and takes c back from l's Accept, woken; c is closed at the test's
// end.
func wakeParked(t *testing.T, l *Listener, client net.Conn, c *Conn) {
	t.Helper()
	_ = c.Close() // parks
	if _, err := client.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if woken, err := l.Accept(); err != nil || woken != c {
		t.Fatalf("Accept: %v, %v; want the parked connection", woken, err)
	}
	t.Cleanup(func() { c.Close() })
}
