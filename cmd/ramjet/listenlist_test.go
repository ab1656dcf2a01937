package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestTakeGivesEachAddressOfAListItsOwnFamilysSocket: systemd's sockets
// for listen: ["0.0.0.0:P", "[::]:P"] are both wildcards of port P, in
// whatever order; each address takes the socket bound to it.
func TestTakeGivesEachAddressOfAListItsOwnFamilysSocket(t *testing.T) {
	v4, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := v4.Addr().(*net.TCPAddr).Port
	v6, err := net.Listen("tcp6", fmt.Sprintf("[::]:%d", port))
	if err != nil {
		_ = v4.Close()
		t.Skipf("no IPv6: %v", err)
	}
	k6, err := newTCPSocket("ramjet.socket", v6)
	if err != nil {
		t.Fatal(err)
	}
	k4, err := newTCPSocket("ramjet.socket", v4)
	if err != nil {
		t.Fatal(err)
	}
	s := &sockets{inherited: []*socket{k6, k4}}
	t.Cleanup(func() { _ = k4.close(); _ = k6.close() })
	if k := s.take("tcp", fmt.Sprintf("0.0.0.0:%d", port)); k != k4 {
		t.Errorf("0.0.0.0:%d took %v, want the IPv4 socket", port, k.bound())
	}
	if k := s.take("tcp", fmt.Sprintf("[::]:%d", port)); k != k6 {
		t.Errorf("[::]:%d took %v, want the IPv6 socket", port, k)
	}
}

// TestAListenListHandsOutTheConnectionsItAcceptedAsItClosed: a
// connection each socket's goroutine accepted but had not handed out as
// the list closed (a stop, an adoption's rollback) is handed out by
// Accept, then Accept says closed. Closing it instead reset a request
// nobody retries (the client's first).
func TestAListenListHandsOutTheConnectionsItAcceptedAsItClosed(t *testing.T) {
	m, _, clients := heldByAListenList(t, 2)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	handsOutThenCloses(t, m, clients)
}

// TestAListenListWhoseSocketsAHandoverClosedHandsOutWhatItHeld: an
// upgrade's handover closes the sockets under the list (the new process
// accepts on them). One socket's goroutine had nothing and ends; the
// other's connection is handed out all the same, and only then does
// Accept say closed: said before, the server's accept loop stopped and
// the connection died with the process. Twenty rounds: which of the two
// Accept met first was a coin toss.
func TestAListenListWhoseSocketsAHandoverClosedHandsOutWhatItHeld(t *testing.T) {
	for round := range 20 {
		m, lns, clients := heldByAListenList(t, 1)
		if err := closeListeners(lns); err != nil {
			t.Fatal(err)
		}
		empty := lns[0].(*countingListener)
		if !testbed.Poll(10*time.Second, func() bool { return empty.failed.Load() }) {
			t.Fatal("the empty socket's Accept did not fail once closed")
		}
		handsOutThenCloses(t, m, clients)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// TestAListenListPassesOnAnAcceptErrorAndGoesOn: out of descriptors, say,
// is the server's to back off from (conns.Listener); the list goes on
// accepting after it.
func TestAListenListPassesOnAnAcceptErrorAndGoesOn(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newMultiListener([]net.Listener{&failing{Listener: ln, times: 1}})
	t.Cleanup(func() { m.Close() })
	if _, err := m.Accept(); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("first Accept: %v, want EMFILE", err)
	}
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sc, err := m.Accept()
	if err != nil {
		t.Fatalf("Accept after the error: %v; want the connection", err)
	}
	_ = sc.Close()
}

// TestAClosedListenListWithAFailingSocketHandsOutWhatItHeld: one socket
// fails every accept (out of descriptors), the other holds a client's
// connection as the list closes: that connection is handed out, and
// then Accept says closed (the failing socket's goroutine ends too).
func TestAClosedListenListWithAFailingSocketHandsOutWhatItHeld(t *testing.T) {
	fl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	m := newMultiListener([]net.Listener{&failing{Listener: fl, times: -1}, &countingListener{Listener: ln, n: &accepted}})
	if !testbed.Poll(10*time.Second, func() bool { return accepted.Load() == 1 }) {
		t.Fatal("the client's connection was not accepted")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	handsOutThenCloses(t, m, []net.Conn{client})
}

// heldByAListenList is a list of two sockets; the last clients of them
// have a client connected, whose connection the socket's goroutine
// accepted and holds (nobody called Accept).
func heldByAListenList(t *testing.T, clients int) (*multiListener, []net.Listener, []net.Conn) {
	t.Helper()
	var accepted atomic.Int32
	var lns []net.Listener
	var conns []net.Conn
	for i := range 2 {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, &countingListener{Listener: ln, n: &accepted})
		if i < 2-clients {
			continue
		}
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	m := newMultiListener(lns)
	t.Cleanup(func() { m.Close() })
	if !testbed.Poll(10*time.Second, func() bool { return accepted.Load() == int32(clients) }) {
		t.Fatalf("%d connections accepted, want %d", accepted.Load(), clients)
	}
	return m, lns, conns
}

// handsOutThenCloses wants m's Accept to hand out the clients'
// connections, then net.ErrClosed.
func handsOutThenCloses(t *testing.T, m *multiListener, clients []net.Conn) {
	t.Helper()
	served := map[string]bool{}
	for range clients {
		sc, err := m.Accept()
		if err != nil {
			t.Fatalf("Accept after the close: %v; want the connections accepted before (%d handed out)", err, len(served))
		}
		t.Cleanup(func() { sc.Close() })
		served[sc.RemoteAddr().String()] = true
	}
	for _, c := range clients {
		if !served[c.LocalAddr().String()] {
			t.Errorf("client %s was not handed out: %v", c.LocalAddr(), served)
		}
	}
	if c, err := m.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept once everything was handed out: %v, %v; want net.ErrClosed", c, err)
	}
}

// countingListener counts the connections its listener accepted, and
// says whether an Accept failed.
type countingListener struct {
	net.Listener
	n      *atomic.Int32
	failed atomic.Bool
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	} else {
		l.failed.Store(true)
	}
	return c, err
}

// failing fails its first times Accepts (every one if negative) as a
// process out of descriptors, then accepts; closed, it says so.
type failing struct {
	net.Listener
	times  int32
	calls  atomic.Int32
	closed atomic.Bool
}

func (l *failing) Accept() (net.Conn, error) {
	if l.closed.Load() {
		return nil, net.ErrClosed
	}
	if n := l.calls.Add(1); l.times < 0 || n <= l.times {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

func (l *failing) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}
