package conns

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"testing"
)

// tcpConn is the server side of a loopback TCP connection as a Conn of
// a listener that does not park, and the client side.
func tcpConn(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(inner, Config{Name: "test"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { l.Close() })
	client, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*Conn), client
}

// countingSock counts the system calls a Conn's writes make.
type countingSock struct {
	io.ReadWriter
	writes int
}

func (s *countingSock) Write(p []byte) (int, error) { s.writes++; return s.ReadWriter.Write(p) }

// response writes head and body through a 4 KiB bufio.Writer the way
// fasthttp writes an answer: head, body, flush.
func response(t *testing.T, c *Conn, head, body []byte) {
	t.Helper()
	w := bufio.NewWriterSize(c, 4096)
	if _, err := w.Write(head); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

func TestAnnouncedBodyLeavesWithItsHeadInOneWrite(t *testing.T) {
	c, client := tcpConn(t)
	if c.raw == nil {
		t.Fatal("a plain TCP connection has a raw socket")
	}
	head, body := []byte("HTTP/1.1 200 OK\r\nContent-Length: 30000\r\n\r\n"), pattern(30000)
	cs := &countingSock{ReadWriter: c.sock}
	c.sock = cs
	c.WriteBody(body)
	response(t, c, head, body)
	if cs.writes != 0 {
		t.Errorf("%d plain writes, want none: the buffer's flush is held and goes with the body's writev", cs.writes)
	}
	got := make([]byte, len(head)+len(body))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(head)+string(body) {
		t.Fatal("the client did not read the head followed by the body")
	}
	if c.vec.held != nil || c.vec.body != nil {
		t.Error("the conn still holds the response after sending it")
	}
}

func TestHeldBytesGoOutBeforeARead(t *testing.T) {
	c, client := tcpConn(t)
	body := pattern(20000)
	c.WriteBody(body) // announced, but the server ends up not writing it
	if _, err := c.Write([]byte("HTTP/1.1 304 Not Modified\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 4)
		_, err := io.ReadFull(c, buf)
		done <- err
	}()
	got := make([]byte, len("HTTP/1.1 304 Not Modified\r\n\r\n"))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "HTTP/1.1 304 Not Modified\r\n\r\n" {
		t.Fatalf("the client read %q, %v before sending its next request", got, err)
	}
	if _, err := client.Write([]byte("GET ")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestHeldBytesGoOutAtIdle(t *testing.T) {
	c, client := tcpConn(t)
	c.WriteBody(pattern(20000))
	msg := "HTTP/1.1 204 No Content\r\n\r\n"
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	c.Idle()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != msg {
		t.Fatalf("the client read %q, %v", got, err)
	}
}

func TestUnannouncedWritesAreNotHeld(t *testing.T) {
	c, client := tcpConn(t)
	head, body := []byte("HTTP/1.1 200 OK\r\n\r\n"), pattern(10000)
	cs := &countingSock{ReadWriter: c.sock}
	c.sock = cs
	response(t, c, head, body)
	if cs.writes != 2 {
		t.Errorf("%d writes, want fasthttp's usual 2 for a body over its buffer", cs.writes)
	}
	if _, err := io.ReadFull(client, make([]byte, len(head)+len(body))); err != nil {
		t.Fatal(err)
	}
}

func TestVectoredResponseAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c, client := tcpConn(t)
	head, body := []byte("HTTP/1.1 200 OK\r\nContent-Length: 30000\r\n\r\n"), pattern(30000)
	w := bufio.NewWriterSize(c, 4096)
	got := make([]byte, len(head)+len(body))
	allocs := testing.AllocsPerRun(50, func() {
		c.WriteBody(body)
		_, _ = w.Write(head)
		_, _ = w.Write(body)
		_ = w.Flush()
		if _, err := io.ReadFull(client, got); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a vectored response allocates %.1f times, want 0", allocs)
	}
}

// TestReadsAndWritesOnTwoGoroutinesDoNotRace: HTTP/2 and TLS read a
// connection on one goroutine while writing it on another; without an
// announced body, neither touches the held-back state (run with -race).
func TestReadsAndWritesOnTwoGoroutinesDoNotRace(t *testing.T) {
	c, client := tcpConn(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := io.ReadFull(c, make([]byte, 50)); err != nil {
			t.Error(err)
		}
	}()
	go func() { _, _ = io.Copy(io.Discard, client) }()
	for range 50 {
		if _, err := c.Write([]byte("frame")); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	<-done
}
