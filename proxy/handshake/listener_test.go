package handshake

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestAcceptHandsOutOnlyPreparedConnections: a connection prepare
// refuses is closed and never accepted, while a silent one being
// prepared holds up none that comes after it.
func TestAcceptHandsOutOnlyPreparedConnections(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(inner, func(c net.Conn) (net.Conn, error) {
		c.SetReadDeadline(time.Now().Add(time.Hour))
		b := make([]byte, 1)
		if _, err := io.ReadFull(c, b); err != nil {
			return nil, err
		}
		if b[0] != 'y' {
			return nil, errors.New("refused")
		}
		return c, nil
	})
	defer l.Close()
	dial := func(first string) net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, first)
		return c
	}
	dial("")              // silent: stays being prepared
	refused := dial("n")  // refused: closed
	accepted := dial("y") // handed out
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.RemoteAddr().String() != accepted.LocalAddr().String() {
		t.Errorf("accepted %s, want %s", c.RemoteAddr(), accepted.LocalAddr())
	}
	refused.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := refused.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("refused connection read: %v, want EOF", err)
	}
}

// readingListener is a listener whose preparer reads one byte (an hour
// at most) and reports the read's error on ended; a client, closed at
// the test's end, is connected and its preparer reading.
func readingListener(t *testing.T) (l *Listener, addr string, client net.Conn, ended <-chan error) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, errs := make(chan struct{}, 1), make(chan error, 1)
	l = NewListener(inner, func(c net.Conn) (net.Conn, error) {
		c.SetReadDeadline(time.Now().Add(time.Hour))
		select {
		case started <- struct{}{}:
		default: // a later connection's
		}
		_, err := c.Read(make([]byte, 1))
		select {
		case errs <- err:
		default:
		}
		return c, err
	})
	addr = inner.Addr().String()
	client, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	<-started
	return l, addr, client, errs
}

// TestCloseCutsShortConnectionsBeingPrepared: Close wakes a preparer
// blocked on a silent peer once the grace is over, and waits for it.
func TestCloseCutsShortConnectionsBeingPrepared(t *testing.T) {
	l, _, _, ended := readingListener(t)
	done := make(chan struct{})
	go func() { l.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not cut the preparer short")
	}
	if err := <-ended; err == nil {
		t.Error("the preparer's read succeeded")
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

// TestCloseHandsOutAConnectionPreparedWithinTheGrace: a client that
// connected before the listener closed and sends its first bytes after
// is still prepared and handed out, then Accept reports the end.
func TestCloseHandsOutAConnectionPreparedWithinTheGrace(t *testing.T) {
	l, addr, c, _ := readingListener(t)
	done := make(chan struct{})
	go func() { l.Close(); close(done) }()
	for {
		probe, err := net.Dial("tcp", addr)
		if err != nil {
			break // the listener closed
		}
		probe.Close()
		time.Sleep(time.Millisecond)
	}
	if _, err := c.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	got, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept: %v; want the connection prepared after Close began", err)
	}
	got.Close()
	<-done
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

// failingListener fails its first Accepts as a process out of
// descriptors does, counting the calls, then reports itself closed.
type failingListener struct {
	net.Listener
	fails int
	calls atomic.Int32
}

func (f *failingListener) Accept() (net.Conn, error) {
	if int(f.calls.Add(1)) <= f.fails {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return nil, net.ErrClosed
}

func (f *failingListener) Close() error { return nil }

// TestAcceptFailuresReachTheCallerOneByOne: out of descriptors, the
// listener neither dies (a PROXY protocol listener stopped for good at
// the first EMFILE) nor retries on its own: each failure is handed to an
// Accept, whose caller backs off before asking again.
func TestAcceptFailuresReachTheCallerOneByOne(t *testing.T) {
	inner := &failingListener{fails: 3}
	l := NewListener(inner, func(c net.Conn) (net.Conn, error) { return c, nil })
	defer l.Close()
	for i := range 3 {
		if _, err := l.Accept(); !errors.Is(err, syscall.EMFILE) {
			t.Fatalf("Accept %d: %v, want EMFILE", i, err)
		}
		// The loop has tried once more and waits to hand that over.
		if n := inner.calls.Load(); n > int32(i)+2 {
			t.Fatalf("after %d failed Accepts the inner listener was asked %d times", i+1, n)
		}
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after the failures: %v, want net.ErrClosed", err)
	}
}
