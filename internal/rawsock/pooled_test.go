package rawsock

import (
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"
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
		var read string
		err := s.ReadPooledEach(&pool, func(b *[]byte, n int) bool {
			read = string((*b)[:n])
			pool.Put(b)
			return false
		})
		if err != nil {
			read = err.Error()
		}
		got <- read // once the read is over: the Sock is the test's again
	}()
	if _, err := client.Write([]byte("request")); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != "request" {
		t.Fatalf("ReadPooledEach read %q, want request", g)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	given := false
	if err := s.ReadPooledEach(&pool, func(*[]byte, int) bool { given = true; return false }); given || err != io.EOF {
		t.Fatalf("ReadPooledEach at the end: a buffer given %v, %v; want io.EOF and no buffer", given, err)
	}
}

func TestReadPooledEachHandsOverEachArrivalWithinOneWait(t *testing.T) {
	client, server := tcpPair(t)
	s, ok := New(server)
	if !ok {
		t.Fatal("no raw socket")
	}
	pool := sync.Pool{New: func() any { b := make([]byte, 64); return &b }}
	got := make(chan string, 4)
	next := make(chan bool)
	done := make(chan error, 1)
	go func() {
		done <- s.ReadPooledEach(&pool, func(b *[]byte, n int) bool {
			got <- string((*b)[:n])
			pool.Put(b)
			return <-next
		})
	}()
	for i, msg := range []string{"first", "second", "third"} {
		if _, err := client.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if g := <-got; g != msg {
			t.Fatalf("each got %q, want %q", g, msg)
		}
		next <- i < 2 // the third stops the wait
	}
	if err := <-done; err != nil {
		t.Fatalf("ReadPooledEach after each stopped it: %v, want nil", err)
	}
	if _, err := client.Write([]byte("plain")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "plain" {
		t.Fatalf("a plain Read after ReadPooledEach: %q, %v; want plain in the caller's buffer", buf[:n], err)
	}
}

func TestReadPooledEachEndsOnTheDeadlineAndAtTheEnd(t *testing.T) {
	client, server := tcpPair(t)
	s, ok := New(server)
	if !ok {
		t.Fatal("no raw socket")
	}
	pool := sync.Pool{New: func() any { b := make([]byte, 64); return &b }}
	calls := 0
	each := func(b *[]byte, n int) bool {
		calls++
		pool.Put(b)
		return server.SetReadDeadline(time.Unix(1, 0)) == nil // the next wait ends at once
	}
	if _, err := client.Write([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadPooledEach(&pool, each); !errors.Is(err, os.ErrDeadlineExceeded) || calls != 1 {
		t.Fatalf("ReadPooledEach past its deadline: %v after %d calls; want the deadline after 1", err, calls)
	}
	if err := server.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadPooledEach(&pool, each); err != io.EOF || calls != 1 {
		t.Fatalf("ReadPooledEach at the end: %v after %d calls; want io.EOF and no call", err, calls)
	}
}
