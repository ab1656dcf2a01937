package rawsock

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// tcpPair is a connected loopback TCP pair.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestSockCarriesBytesBothWays(t *testing.T) {
	client, server := tcpPair(t)
	s, ok := New(server)
	if !ok {
		t.Fatal("a TCP connection has a descriptor")
	}
	big := make([]byte, 4<<20) // more than the socket buffers: Write must wait for the reader
	for i := range big {
		big[i] = byte(i)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(big))))
		got <- b
	}()
	if n, err := s.Write(big); err != nil || n != len(big) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b := <-got; string(b) != string(big) {
		t.Fatalf("the peer read %d bytes, not what was written", len(b))
	}
	if _, err := client.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := s.Read(buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
}

func TestWriteTwoSendsBothInOrderThroughPartialWrites(t *testing.T) {
	client, server := tcpPair(t)
	s, _ := New(server)
	head := []byte("HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\n\r\n")
	body := make([]byte, 4<<20) // more than the socket buffers: writev returns short
	for i := range body {
		body[i] = byte(i * 7)
	}
	want := append(append([]byte{}, head...), body...)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(want))))
		got <- b
	}()
	if n, err := s.WriteTwo(head, body); err != nil || n != len(want) {
		t.Fatalf("WriteTwo = %d, %v; want %d", n, err, len(want))
	}
	if b := <-got; string(b) != string(want) {
		t.Fatalf("the peer read %d bytes, not the head followed by the body", len(b))
	}
}

func TestWriteTwoWithAnEmptyPart(t *testing.T) {
	client, server := tcpPair(t)
	s, _ := New(server)
	for _, c := range []struct{ a, b string }{{"", "body"}, {"head", ""}, {"", ""}} {
		n, err := s.WriteTwo([]byte(c.a), []byte(c.b))
		if err != nil || n != len(c.a)+len(c.b) {
			t.Fatalf("WriteTwo(%q, %q) = %d, %v", c.a, c.b, n, err)
		}
	}
	buf := make([]byte, 8)
	if _, err := io.ReadFull(client, buf); err != nil || string(buf) != "bodyhead" {
		t.Fatalf("the peer read %q, %v", buf, err)
	}
}

func TestSockReadHonoursDeadlineAndEOF(t *testing.T) {
	client, server := tcpPair(t)
	s, _ := New(server)
	if err := server.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Read(make([]byte, 1))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past the deadline = %v, want a net timeout", err)
	}
	if err := server.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	client.Close()
	if _, err := s.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("Read after the peer closed = %v, want io.EOF", err)
	}
}

func TestSockOfConnWithoutDescriptor(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, ok := New(a); ok {
		t.Fatal("a net.Pipe has no descriptor")
	}
}

func TestSockReadAndWriteAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	client, server := tcpPair(t)
	s, _ := New(server)
	peer, _ := New(client)
	msg, buf := []byte("ping"), make([]byte, 16)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.WriteTwo(msg, msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, buf[:2*len(msg)]); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := peer.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a writev, a write and their reads allocate %.1f times, want 0", allocs)
	}
}

// wrapped names the connection it wraps, as crypto/tls does.
type wrapped struct{ net.Conn }

func (w wrapped) NetConn() net.Conn { return w.Conn }

func TestUnderFindsTheSocketAndPeekSeesWithoutTaking(t *testing.T) {
	client, server := tcpPair(t)
	rc, ok := Under(wrapped{wrapped{server}})
	if !ok {
		t.Fatal("no socket under two wrappers of a TCP connection")
	}
	peek := func() (n int, errno syscall.Errno) {
		if err := rc.Control(func(fd uintptr) { n, errno = Peek(fd) }); err != nil {
			t.Fatal(err)
		}
		return n, errno
	}
	if _, errno := peek(); errno != syscall.EAGAIN {
		t.Fatalf("peek of an empty socket: errno %v, want EAGAIN", errno)
	}
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n, errno := peek(); n != 1 || errno != 0; n, errno = peek() {
		if time.Now().After(deadline) {
			t.Fatalf("peek after a byte: %d, %v", n, errno)
		}
		runtime.Gosched()
	}
	buf := make([]byte, 1)
	if _, err := server.Read(buf); err != nil || buf[0] != 'x' {
		t.Fatalf("the byte peeked at was taken: %q, %v", buf, err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, ok := Under(a); ok {
		t.Error("a net.Pipe has a socket")
	}
}

func TestAResetSockServesTheOtherSocket(t *testing.T) {
	client1, server1 := tcpPair(t)
	client2, server2 := tcpPair(t)
	s, ok := New(server1)
	if !ok {
		t.Fatal("a TCP connection has a descriptor")
	}
	rc, err := server2.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	s.Reset(rc)
	if _, err := s.Write([]byte("two")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(client2, buf); err != nil || string(buf) != "two" {
		t.Fatalf("the second socket's peer read %q, %v", buf, err)
	}
	if err := client1.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n, err := client1.Read(buf); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the first socket's peer read %d bytes (%v), want none", n, err)
	}
}

// TestReadNowDoesNotWait: ReadNow on a socket with nothing to read
// returns syscall.EAGAIN at once, even without a deadline, and what the
// socket holds when it holds something.
func TestReadNowDoesNotWait(t *testing.T) {
	client, server := tcpPair(t)
	s, ok := New(server)
	if !ok {
		t.Fatal("a TCP connection has a descriptor")
	}
	buf := make([]byte, 8)
	if n, err := s.ReadNow(buf); n > 0 || !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("ReadNow on an empty socket: %d, %v; want EAGAIN", n, err)
	}
	if _, err := client.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := s.ReadNow(buf)
		if err == nil {
			if string(buf[:n]) != "hi" {
				t.Fatalf("ReadNow: %q, want hi", buf[:n])
			}
			break
		}
		if !errors.Is(err, syscall.EAGAIN) || time.Now().After(deadline) {
			t.Fatalf("ReadNow after the client wrote: %v", err)
		}
		runtime.Gosched()
	}
	client.Close()
	// A read that waits still waits, and sees the end.
	if _, err := s.Read(buf); err != io.EOF {
		t.Fatalf("Read after the client closed: %v, want io.EOF", err)
	}
}
