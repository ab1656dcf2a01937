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

// TestCloseCutsShortConnectionsBeingPrepared: Close wakes a preparer
// blocked on a silent peer and waits for it.
func TestCloseCutsShortConnectionsBeingPrepared(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, ended := make(chan struct{}), make(chan error, 1)
	l := NewListener(inner, func(c net.Conn) (net.Conn, error) {
		c.SetReadDeadline(time.Now().Add(time.Hour))
		close(started)
		_, err := c.Read(make([]byte, 1))
		ended <- err
		return nil, err
	})
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-started
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
