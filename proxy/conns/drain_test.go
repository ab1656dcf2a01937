package conns

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// drainingListener parks connections idle for a millisecond and gives
// those that sent nothing grace to be heard when it closes.
func drainingListener(t *testing.T, grace time.Duration) (*Listener, string) {
	return configListener(t, Config{Name: "test", Park: true, Linger: time.Millisecond, MaxLinger: time.Millisecond, DrainGrace: grace})
}

// parkedClient connects a client to l at addr (closed at the test's
// end), which sends nothing, and waits until its connection parked.
func parkedClient(t *testing.T, l *Listener, addr string) net.Conn {
	t.Helper()
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	waitFor(t, "parked", func() bool { return l.Stats().Parked == 1 })
	return client
}

// closing closes l on a goroutine of its own; the channel is closed when
// Close returned.
func closing(l *Listener) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Close()
	}()
	return done
}

// dials reports whether a connection to addr opens. It closes it: a
// probe that went in before the listener closed would hold the drain
// for its grace, as any connection that sends nothing does.
func dials(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// echoed sends b on client and wants it back.
func echoed(t *testing.T, client net.Conn, b string) {
	t.Helper()
	if _, err := client.Write([]byte(b)); err != nil {
		t.Fatalf("write %q: %v", b, err)
	}
	got := make([]byte, len(b))
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := client.Read(got); err != nil || string(got) != b {
		t.Fatalf("sent %q, read %q, %v; want it echoed", b, got, err)
	}
}

// TestAConnectionParkedBeforeItsFirstRequestIsAnsweredAsTheListenerCloses:
// a client whose request comes after its connection was parked for want
// of bytes, and after the listener began to close, is answered; the
// close then waits no longer (the grace is a minute).
func TestAConnectionParkedBeforeItsFirstRequestIsAnsweredAsTheListenerCloses(t *testing.T) {
	l, addr := drainingListener(t, time.Minute)
	go serveEcho(l)
	client := parkedClient(t, l, addr)
	closed := closing(l)
	waitFor(t, "the listener closed", func() bool { return !dials(addr) })
	echoed(t, client, "a")
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits after the connection was heard")
	}
	expectEOF(t, client) // parked after its answer: closed
}

// TestAConnectionHeldByTheAcceptLoopAsTheListenerClosesIsHandedOut: a
// connection accepted but not yet taken by the server's Accept when the
// listener closes is still handed out, then Accept reports the end.
func TestAConnectionHeldByTheAcceptLoopAsTheListenerClosesIsHandedOut(t *testing.T) {
	l, addr := drainingListener(t, time.Minute)
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	waitFor(t, "admitted", func() bool { return l.Stats().Open == 1 }) // and held: nobody called Accept
	handedOutAsItCloses(t, l, client)
}

// TestEveryConnectionAnInnerListenerStillHeldAsItClosedIsHandedOut: an
// inner listener of several sockets (cmd/ramjet's listen list) may hold
// one connection per socket as it closes, and hands them out before it
// says closed; each is served, none closed unanswered.
func TestEveryConnectionAnInnerListenerStillHeldAsItClosedIsHandedOut(t *testing.T) {
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inner := &leavingListener{Listener: tl, closed: make(chan struct{}), held: make(chan net.Conn, 2)}
	var clients []net.Conn
	for range 2 {
		client, err := net.Dial("tcp", tl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		clients = append(clients, client)
		sc, err := tl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		inner.held <- sc
	}
	l := NewListener(inner, Config{Name: "test", Park: true, Linger: time.Millisecond, MaxLinger: time.Millisecond, DrainGrace: time.Minute},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	closed := closing(l)
	// Both admitted before anyone calls Accept: the first is held for
	// Accept, the accept goroutine goes on to the second.
	waitFor(t, "both admitted", func() bool { return l.Stats().Open == 2 })
	for range 2 {
		nc, err := l.Accept()
		if err != nil {
			t.Fatalf("Accept after Close began: %v; want the connections the inner listener held", err)
		}
		defer nc.Close()
		go func() { // echoes one byte
			b := make([]byte, 1)
			if _, err := nc.Read(b); err == nil {
				_, _ = nc.Write(b)
			}
		}()
	}
	for _, c := range clients {
		echoed(t, c, "a")
	}
	<-closed
	if c, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, %v; want net.ErrClosed", c, err)
	}
}

// TestAConnectionHeldByTheInnerListenerIsHandedOutWhenCloseCameDuringABackOff:
// the accept loop pauses after a failed accept (out of descriptors);
// Close during the pause still asks the inner listener once more, and
// what it held is served.
func TestAConnectionHeldByTheInnerListenerIsHandedOutWhenCloseCameDuringABackOff(t *testing.T) {
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client, err := net.Dial("tcp", tl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sc, err := tl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	inner := &failingFirst{failed: make(chan struct{}),
		leavingListener: leavingListener{Listener: tl, closed: make(chan struct{}), held: make(chan net.Conn, 1)}}
	inner.held <- sc
	l := NewListener(inner, Config{Name: "test", Park: true, Linger: time.Millisecond, MaxLinger: time.Millisecond, DrainGrace: time.Minute},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	<-inner.failed // the accept loop pauses 5 ms
	handedOutAsItCloses(t, l, client)
}

// failingFirst is a leavingListener whose first Accept fails as a
// process out of descriptors.
type failingFirst struct {
	leavingListener
	failed chan struct{}
	once   sync.Once
}

func (l *failingFirst) Accept() (net.Conn, error) {
	first := false
	l.once.Do(func() { first = true })
	if first {
		close(l.failed)
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.leavingListener.Accept()
}

// leavingListener is an inner listener of several sockets as it closes:
// it accepts nothing before, then hands out the connections it held,
// then says closed.
type leavingListener struct {
	net.Listener
	closed chan struct{}
	held   chan net.Conn
}

func (l *leavingListener) Accept() (net.Conn, error) {
	<-l.closed
	select {
	case c := <-l.held:
		return c, nil
	default:
		return nil, net.ErrClosed
	}
}

func (l *leavingListener) Close() error {
	close(l.closed)
	return l.Listener.Close()
}

// handedOutAsItCloses closes l and wants its Accept to hand out the
// connection of client (one that reads what client sends), then to say
// closed once Close returned.
func handedOutAsItCloses(t *testing.T, l *Listener, client net.Conn) {
	t.Helper()
	closed := closing(l)
	nc, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after Close began: %v; want the connection accepted before", err)
	}
	defer nc.Close()
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if n, err := nc.Read(b); n != 1 || err != nil {
		t.Fatalf("server read %d, %v", n, err)
	}
	<-closed
	if c, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, %v; want net.ErrClosed", c, err)
	}
}

// TestASilentConnectionIsClosedAtTheEndOfTheGrace: a connection that
// never sends anything holds a closing listener for its grace, not more.
func TestASilentConnectionIsClosedAtTheEndOfTheGrace(t *testing.T) {
	l, addr := drainingListener(t, 50*time.Millisecond)
	go serveEcho(l)
	client := parkedClient(t, l, addr)
	select {
	case <-closing(l):
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits past the grace")
	}
	expectEOF(t, client)
	if s := l.Stats(); s.Open != 0 {
		t.Fatalf("%d open after close, want 0", s.Open)
	}
}
