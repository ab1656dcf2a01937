package conns

import (
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
)

// failingListener fails its first Accepts as a process out of
// descriptors does, then hands out one end of a pipe.
type failingListener struct {
	net.Listener
	fails   int
	calls   int
	handout chan net.Conn
}

func (f *failingListener) Accept() (net.Conn, error) {
	f.calls++
	if f.calls <= f.fails {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	c, ok := <-f.handout
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}

func (f *failingListener) Close() error { return nil }

// TestAcceptBacksOffWhenOutOfDescriptors: EMFILE neither ends the
// listener (fasthttp's Serve would return) nor spins: each failure is
// one pause, and the next connection is served.
func TestAcceptBacksOffWhenOutOfDescriptors(t *testing.T) {
	inner := &failingListener{fails: 4, handout: make(chan net.Conn, 1)}
	l := NewListener(inner, Config{Name: "test"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	server, client := net.Pipe()
	defer client.Close()
	inner.handout <- server
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := l.Stats()
	if st.AcceptErrors != 4 || st.AcceptBackoff != 4 || st.Open != 1 {
		t.Errorf("stats %+v, want 4 errors, 4 pauses, 1 open", st)
	}
	close(inner.handout)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Accept(); err == nil {
		t.Error("Accept after Close succeeded")
	}
}
