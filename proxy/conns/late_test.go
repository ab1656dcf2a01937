package conns

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// lateConn is a parking listener's connection, woken once, whose linger
// is over as soon as it is armed (1 ns), and the client side: its next idle Read
// finds the linger deadline fired, as a busy core's scheduler lets it
// fire before it polls the network.
func lateConn(t *testing.T) (*Conn, *Listener, net.Conn) {
	t.Helper()
	l, addr := lingerListener(t, time.Nanosecond, time.Second)
	client, c := dialAccepted(t, l, addr)
	c.linger = l.cfg.Linger // woken once: it lingers (a first answer's park waits for nothing)
	return c, l, client
}

// sent waits until the bytes the client sent are in c's socket.
func sent(t *testing.T, c *Conn) {
	t.Helper()
	ready := func() bool {
		n := 0
		if err := c.rc.Control(func(fd uintptr) { n, _ = rawsock.Peek(fd) }); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if !testbed.Poll(5*time.Second, ready) {
		t.Fatal("the client's bytes never reached the server's socket")
	}
}

func TestARequestWaitingWhenTheLingerEndsIsReadNotParked(t *testing.T) {
	c, l, client := lateConn(t)
	c.Idle()
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	sent(t, c)
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "a" {
		t.Fatalf("Read = %q, %v; want the request's byte (io.EOF parks the connection)", buf[:n], err)
	}
	if s := l.Stats(); s.Parks != 0 || s.LateReads != 1 {
		t.Fatalf("parks %d, late reads %d; want 0 and 1", s.Parks, s.LateReads)
	}
	if c.linger != 2*time.Nanosecond {
		t.Fatalf("linger %v after a late read, want it doubled to 2ns", c.linger)
	}
	// The rest of the request is read under the server's deadline, not
	// the linger's that fired.
	c.Busy()
	if _, err := client.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "b" {
		t.Fatalf("next Read = %q, %v; want %q", buf[:n], err, "b")
	}
}

func TestAConnectionWithNothingWaitingWhenTheLingerEndsParks(t *testing.T) {
	c, l, _ := lateConn(t)
	c.Idle()
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read = %d, %v; want 0, io.EOF (park)", n, err)
	}
	if s := l.Stats(); s.LateReads != 0 {
		t.Fatalf("%d late reads with nothing sent", s.LateReads)
	}
}

func TestAClientGoneWhenTheLingerEndsIsClosedNotParked(t *testing.T) {
	c, l, client := lateConn(t)
	c.Idle()
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	sentEOF := func() bool {
		var n int
		var e syscall.Errno
		if err := c.rc.Control(func(fd uintptr) { n, e = rawsock.Peek(fd) }); err != nil {
			t.Fatal(err)
		}
		return n == 0 && e == 0
	}
	if !testbed.Poll(5*time.Second, sentEOF) {
		t.Fatal("the client's close never reached the server's socket")
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read = %d, %v; want 0, io.EOF", n, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.LateReads != 0 || s.Parks != 0 {
		t.Fatalf("late reads %d, parks %d from a closed client; want it closed, not parked", s.LateReads, s.Parks)
	}
}
