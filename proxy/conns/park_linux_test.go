package conns

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"
)

// TestAParkedConnectionHoldsNoSockAndAWokenOneGetsOneBack: while parked
// a connection keeps no raw Sock and no net.Conn (memory per idle
// connection); woken, it is the same connection and reads and writes
// with raw system calls again.
func TestAParkedConnectionHoldsNoSockAndAWokenOneGetsOneBack(t *testing.T) {
	l, addr := parkingListener(t)
	client, err := net.Dial("tcp", addr)
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
	held := c.raw != nil || c.sock != nil || c.Conn != nil
	l.lot.mu.Unlock()
	if held {
		t.Fatal("a parked connection still holds its raw Sock or its net.Conn")
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
	if got, want := c.RemoteAddr().String(), client.LocalAddr().String(); got != want {
		t.Fatalf("woken connection's peer %s, want %s", got, want)
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

func TestClosingTheListenerClosesAParkedConnection(t *testing.T) {
	l, addr := parkingListener(t)
	go serveEcho(l)
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	deadline := time.Now().Add(5 * time.Second)
	for l.Stats().Parked != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the connection was not parked")
		}
		time.Sleep(time.Millisecond)
	}
	l.Close()
	if err := client.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("client Read after the listener closed: %d, %v; want io.EOF", n, err)
	}
	if s := l.Stats(); s.Open != 0 {
		t.Fatalf("%d open after close, want 0", s.Open)
	}
}

// parkingListener is a listener on a loopback port that parks
// connections idle for a millisecond, and its address.
func parkingListener(t *testing.T) (*Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(inner, Config{Name: "test", Park: true, Linger: time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { l.Close() })
	if l.lot == nil {
		t.Skip("parking is not available here")
	}
	return l, inner.Addr().String()
}
