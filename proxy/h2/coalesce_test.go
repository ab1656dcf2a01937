package h2

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// Bytes arrive in order, larger than the backlog limit too, and Close
// sends what is still queued.
func TestCoalescingConnKeepsOrderAndFlushesOnClose(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c2.Close()
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(c2); got <- b }()
	w := coalesce(c1)
	var want bytes.Buffer
	for i := range 2000 {
		p := []byte(fmt.Sprintf("frame %d;", i))
		if i%500 == 0 {
			p = bytes.Repeat([]byte{byte('a' + i%26)}, coalesceLimit+100)
		}
		want.Write(p)
		if n, err := w.Write(p); err != nil || n != len(p) {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("got %d bytes, want %d, or out of order", len(b), want.Len())
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// A failed write is reported by a later Write and closes the connection.
func TestCoalescingConnReportsWriteError(t *testing.T) {
	c1, c2 := net.Pipe()
	c2.Close()
	w := coalesce(c1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := w.Write([]byte("frame")); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("writes to a closed peer keep succeeding")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := c1.Read(make([]byte, 1)); err == nil {
		t.Error("connection not closed after the write error")
	}
}

// Close gives up on a client that stopped reading.
func TestCoalescingConnCloseBounded(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c2.Close()
	w := coalesce(c1)
	if _, err := w.Write([]byte("never read")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = w.Close()
	if d := time.Since(start); d > closeFlushTimeout+time.Second {
		t.Errorf("Close took %v", d)
	}
}
