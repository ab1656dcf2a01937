package conns

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestAParkedConnectionHoldsNoSockAndAWokenOneGetsOneBack: while parked
// a connection keeps no raw Sock (memory per idle connection); woken, it
// reads and writes with raw system calls again.
func TestAParkedConnectionHoldsNoSockAndAWokenOneGetsOneBack(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(inner, Config{Name: "test", Park: true, Linger: time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if l.lot == nil {
		testbed.Skip(t, "parking is not available here")
	}
	defer l.Close()
	client, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := nc.(*Conn)
	if c.raw == nil {
		t.Fatal("an accepted plain TCP connection has no raw Sock")
	}
	c.Idle()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle Read past the linger: %v, want io.EOF (park)", err)
	}
	if err := c.Close(); err != nil { // parks
		t.Fatal(err)
	}
	if s := l.Stats(); s.Parked != 1 {
		t.Fatalf("%d parked, want 1", s.Parked)
	}
	l.lot.mu.Lock() // the lot's wake writes c's fields after taking it
	held := c.raw != nil || c.sock != c.Conn
	l.lot.mu.Unlock()
	if held {
		t.Fatal("a parked connection still holds its raw Sock")
	}

	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	woken, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if woken != c {
		t.Fatalf("Accept gave %p, want the parked connection %p", woken, c)
	}
	defer c.Close()
	if c.raw == nil || c.sock != c.raw {
		t.Fatal("a woken connection has no raw Sock")
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(c, buf); err != nil || buf[0] != 'x' {
		t.Fatalf("woken Read: %q, %v", buf, err)
	}
	c.Busy()
	if _, err := c.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := client.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(client, buf); err != nil || buf[0] != 'y' {
		t.Fatalf("client Read: %q, %v", buf, err)
	}
}
