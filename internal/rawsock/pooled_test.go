package rawsock

import (
	"io"
	"sync"
	"testing"
)

func TestReadPooledReturnsABufferOnlyWithBytes(t *testing.T) {
	client, server := tcpPair(t)
	s, ok := New(server)
	if !ok {
		t.Fatal("no raw socket")
	}
	pool := sync.Pool{New: func() any { b := make([]byte, 64); return &b }}

	if b, n, err := s.ReadPooledNow(&pool); b != nil || n != 0 || err != nil {
		t.Fatalf("ReadPooledNow of an empty socket: %v %d %v; want nothing, no error", b, n, err)
	}
	if _, err := client.Write([]byte("plain")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "plain" {
		t.Fatalf("a plain Read after ReadPooledNow found nothing: %q, %v; want plain in the caller's buffer", buf[:n], err)
	}
	got := make(chan string, 1)
	go func() {
		b, n, err := s.ReadPooled(&pool)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string((*b)[:n])
		pool.Put(b)
	}()
	if _, err := client.Write([]byte("request")); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != "request" {
		t.Fatalf("ReadPooled read %q, want request", g)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	if b, n, err := s.ReadPooled(&pool); b != nil || n != 0 || err != io.EOF {
		t.Fatalf("ReadPooled at the end: %v %d %v; want io.EOF and no buffer", b, n, err)
	}
}
