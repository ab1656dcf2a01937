package conns

import (
	"bufio"
	"context"
	"fmt"
	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAParkedConnectionIsDetachedAndAWokenOneIsTheSameConnection: while
// parked a plain TCP connection keeps neither a raw Sock nor a net.Conn
// (Go's netpoller entry, netFD and addresses go with it); woken by the
// client's bytes it is the same Conn, with its peer's address, reading
// and writing with raw system calls again.
func TestAParkedConnectionIsDetachedAndAWokenOneIsTheSameConnection(t *testing.T) {
	l, addr := parkingListener(t)
	client, c := dialAccepted(t, l, addr)
	c.Idle()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle Read past the linger: %v, want io.EOF (park)", err)
	}
	if err := c.Close(); err != nil { // parks
		t.Fatal(err)
	}
	l.lot.mu.Lock() // the lot's wake writes c's fields after taking it
	detachedNow, raw := c.isDetached(), c.raw
	l.lot.mu.Unlock()
	if !detachedNow || raw != nil {
		t.Fatalf("a parked connection: detached %v, raw Sock %v; want detached, none", detachedNow, raw)
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
	if c.isDetached() || c.raw == nil || c.sock != c.raw {
		t.Fatal("a woken connection is not attached with a raw Sock")
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

// TestManyDetachedConnectionsEachAnswerTheirOwnClient: connections
// parked and woken over and over (new descriptors each time, numbers
// reused among them) each keep talking to their own client, and no
// descriptor is left behind once they close.
func TestManyDetachedConnectionsEachAnswerTheirOwnClient(t *testing.T) {
	before := openFDs(t)
	l, addr := parkingListener(t)
	go serveUpper(l)
	const clients, rounds = 40, 5
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- talkAfterPauses(addr, byte('a'+i%26), rounds)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if s := l.Stats(); s.Parks < clients*rounds {
		t.Fatalf("%d parks, want at least %d (each pause parks)", s.Parks, clients*rounds)
	}
	waitFor(t, "every connection closed", func() bool { return l.Stats().Open == 0 })
	l.Close()
	if after := openFDs(t); after > before {
		t.Fatalf("descriptors %d before, %d after: leaked", before, after)
	}
}

// talkAfterPauses sends b, pauses past the linger (the connection
// parks), and expects b's upper case back, rounds times.
func talkAfterPauses(addr string, b byte, rounds int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	buf := make([]byte, 1)
	for i := range rounds {
		time.Sleep(20 * time.Millisecond) // past the 1 ms linger: parked
		if _, err := c.Write([]byte{b}); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		if want := b - 'a' + 'A'; buf[0] != want {
			return fmt.Errorf("round %d: client %q got %q, want %q (another connection's answer)", i, b, buf[0], want)
		}
	}
	return nil
}

// TestADetachedConnectionIsClosedAtItsIdleTimeout: the deadline the
// server set while idle closes the parked connection; the client sees
// the end and its place under the limits is free.
func TestADetachedConnectionIsClosedAtItsIdleTimeout(t *testing.T) {
	l, addr := parkingListener(t)
	go serveEchoIdleFor(l, 300*time.Millisecond)
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	waitFor(t, "the connection parked", func() bool { return l.Stats().Parked == 1 })
	expectEOF(t, client)
	waitFor(t, "its place given back", func() bool { return l.Stats().Open == 0 })
}

// TestAClientHangingUpWhileDetachedFreesItsConnection: a client that
// closes a parked connection wakes it; the server reads the end and the
// connection is gone, descriptor and place.
func TestAClientHangingUpWhileDetachedFreesItsConnection(t *testing.T) {
	before := openFDs(t)
	l, addr := parkingListener(t)
	go serveEcho(l)
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the connection parked", func() bool { return l.Stats().Parked == 1 })
	client.Close()
	waitFor(t, "the connection closed", func() bool { s := l.Stats(); return s.Open == 0 && s.Parked == 0 })
	l.Close()
	if after := openFDs(t); after > before {
		t.Fatalf("descriptors %d before, %d after: leaked", before, after)
	}
}

// TestClosingTheListenerClosesEveryDetachedConnection: a shutdown
// closes the connections parked after an answer at once, without
// waiting out the grace the silent ones get; each client sees the end.
func TestClosingTheListenerClosesEveryDetachedConnection(t *testing.T) {
	l, addr := drainingListener(t, time.Minute)
	go serveEcho(l)
	var clients []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		echoed(t, c, "a")
		clients = append(clients, c)
	}
	waitFor(t, "all parked", func() bool { return l.Stats().Parked == 5 })
	select {
	case <-closing(l):
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for connections parked after an answer")
	}
	for _, c := range clients {
		expectEOF(t, c)
	}
	if s := l.Stats(); s.Open != 0 {
		t.Fatalf("%d open after close, want 0", s.Open)
	}
}

// parkingListener is a listener on a loopback port that parks
// connections idle for a millisecond, and its address.
func parkingListener(t *testing.T) (*Listener, string) {
	return lingerListener(t, time.Millisecond, time.Millisecond)
}

// serveUpper is serveEcho answering each byte in upper case.
func serveUpper(l *Listener) { serveBytes(l, time.Minute, func(b byte) byte { return b - 'a' + 'A' }) }

// serveEchoIdleFor is serveEcho with idle as the idle timeout.
func serveEchoIdleFor(l *Listener, idle time.Duration) {
	serveBytes(l, idle, func(b byte) byte { return b })
}

func expectEOF(t *testing.T, c net.Conn) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := bufio.NewReader(c).ReadByte(); err != io.EOF {
		t.Fatalf("client Read: %q, %v; want io.EOF", n, err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if !testbed.Poll(5*time.Second, ok) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestAWokenConnectionKeepsItsListenersKeepAlive: waking a detached
// connection makes a new net.Conn on its socket, to which Go gives TCP
// keep-alive probes; a connection accepted without them (ramjet's
// listener with an idle timeout) has none after a park and a wake
// either, and one accepted with them keeps them.
func TestAWokenConnectionKeepsItsListenersKeepAlive(t *testing.T) {
	for _, probes := range []bool{false, true} {
		lc := net.ListenConfig{KeepAlive: -1}
		if probes {
			lc.KeepAlive = 0 // Go's default: on
		}
		inner, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l := NewListener(inner, Config{Name: "test", Park: true, Linger: time.Millisecond},
			slog.New(slog.NewTextHandler(io.Discard, nil)))
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
		c.Idle()
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("idle Read past the linger: %v, want io.EOF (park)", err)
		}
		c.Close() // parks, detached
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if woken, err := l.Accept(); err != nil || woken != c {
			t.Fatalf("Accept: %v, %v; want the parked connection", woken, err)
		}
		var on int
		var gerr error
		if err := c.rc.Control(func(fd uintptr) {
			on, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		}); err != nil || gerr != nil {
			t.Fatal(err, gerr)
		}
		if (on != 0) != probes {
			t.Errorf("accepted with keep-alive probes %v, woken with SO_KEEPALIVE %d", probes, on)
		}
		c.Close()
	}
}

// TestAWokenConnectionIsOutOfTheLotsEpollSet: a connection is in the
// lot's epoll set exactly while parked. One parked attached (no RawConn
// to detach it by, as under a PROXY header's wrapper, or no descriptor
// left for the dup) is out of it once woken, so that parking it detached
// later leaves no entry behind under its old descriptor's number; and it
// still answers its own client after each wake.
func TestAWokenConnectionIsOutOfTheLotsEpollSet(t *testing.T) {
	l, addr := parkingListener(t)
	client, c := dialAccepted(t, l, addr)
	defer c.Close()
	rc := c.rc
	for i, attached := range []bool{true, false} {
		if attached {
			c.rc = nil // detach cannot: parked attached
		}
		c.Idle()
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("park %d: idle Read past the linger: %v, want io.EOF (park)", i, err)
		}
		_ = c.Close() // parks
		if _, err := client.Write([]byte{'a' + byte(i)}); err != nil {
			t.Fatal(err)
		}
		if woken, err := l.Accept(); err != nil || woken != c {
			t.Fatalf("park %d: Accept: %v, %v; want the parked connection", i, woken, err)
		}
		if c.isDetached() {
			t.Fatalf("park %d: woken but detached", i)
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}
		if err := unix.EpollCtl(l.lot.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != unix.ENOENT {
			t.Fatalf("park %d (attached %v): the woken connection's descriptor in the lot's set: %v, want ENOENT", i, attached, err)
		}
		if attached {
			c.rc = rc
			c.takeSock()
		}
		buf := make([]byte, 1)
		if _, err := io.ReadFull(c, buf); err != nil || buf[0] != 'a'+byte(i) {
			t.Fatalf("park %d: woken Read: %q, %v", i, buf, err)
		}
		c.Busy()
	}
}
