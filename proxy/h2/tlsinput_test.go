package h2

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"
	"unsafe"

	"github.com/ramjet-proxy/ramjet/proxy/certs/certtest"
)

// TestTLSInputFieldsAreFound: crypto/tls's input fields are where
// shedTLSInput looks for them; a Go release that renames or retypes them
// fails here, where idle connections would otherwise silently keep their
// handshake buffers.
func TestTLSInputFieldsAreFound(t *testing.T) {
	if !tlsInput.ok {
		t.Fatal("tls.Conn has no rawInput/hand bytes.Buffer or input bytes.Reader: shedTLSInput is off")
	}
}

// tlsPair is a TLS 1.3 connection over loopback TCP, handshake done.
func tlsPair(t *testing.T) (client, server *tls.Conn) {
	t.Helper()
	ca := certtest.NewCA(t, "shed test CA")
	c, k := ca.Issue(t, "", "localhost").Write(t, t.TempDir(), "server")
	cert, err := tls.LoadX509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *tls.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		sc := tls.Server(nc, &tls.Config{Certificates: []tls.Certificate{cert}})
		if sc.Handshake() != nil {
			sc.Close()
			sc = nil
		}
		accepted <- sc
	}()
	client, err = tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("server handshake failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// inputCaps are the capacities of tc's record and handshake buffers.
func inputCaps(tc *tls.Conn) (raw, hand int) {
	p := unsafe.Pointer(tc)
	return (*bytes.Buffer)(unsafe.Add(p, tlsInput.raw)).Cap(), (*bytes.Buffer)(unsafe.Add(p, tlsInput.hand)).Cap()
}

func readN(t *testing.T, c *tls.Conn, n int) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestShedTLSInputDropsTheHandshakesBuffersOnlyWhenEmpty: after the
// handshake and a first read, an idle server connection's record and
// handshake buffers go; bytes still undelivered keep them; the
// connection reads on either way.
func TestShedTLSInputDropsTheHandshakesBuffersOnlyWhenEmpty(t *testing.T) {
	client, server := tlsPair(t)
	if _, err := client.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, server, 1); got != "a" {
		t.Fatalf("read %q, want a", got)
	}
	rawBefore, _ := inputCaps(server)
	shedTLSInput(server) // "b" is still undelivered
	if raw, _ := inputCaps(server); raw != rawBefore || raw == 0 {
		t.Fatalf("record buffer %d bytes after a shed with a byte undelivered, want it kept (%d)", raw, rawBefore)
	}
	if got := readN(t, server, 1); got != "b" {
		t.Fatalf("read %q after the shed, want b", got)
	}
	shedTLSInput(server)
	if raw, hand := inputCaps(server); raw != 0 || hand != 0 {
		t.Fatalf("record and handshake buffers %d and %d bytes after the shed of an idle connection, want none", raw, hand)
	}
	if _, err := client.Write([]byte("cd")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, server, 2); got != "cd" {
		t.Fatalf("read %q after the buffers went, want cd", got)
	}
}
