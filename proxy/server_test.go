package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/conns"
	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
)

// startServer serves a handler that answers with the client's address.
func startServer(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	cfg.Name, cfg.Addr = "test", "127.0.0.1:0"
	s := NewServer(cfg, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString(ctx.RemoteAddr().String())
	}, discardLog)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

type client struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, br: bufio.NewReader(c)}
}

// get sends one request and reads its answer: status and body.
func (c *client) get() (int, string, error) {
	c.t.Helper()
	if _, err := io.WriteString(c.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0, "", err
	}
	return c.read()
}

func (c *client) read() (int, string, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), err
}

// serving counts the goroutines in fasthttp's connection loop.
func serving() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "fasthttp.(*Server).serveConn")
		}
		buf = make([]byte, 2*len(buf))
	}
}

func waitStats(t *testing.T, s *Server, what string, ok func(conns.Stats) bool) {
	t.Helper()
	if !testbed.Poll(5*time.Second, func() bool { return ok(s.ConnStats()) }) {
		t.Fatalf("%s: stats %+v", what, s.ConnStats())
	}
}

// TestIdleConnectionIsParkedAndServedAgain: a keep-alive connection
// with no request pending gives back its goroutine, and its next
// request is answered as the first was.
func TestIdleConnectionIsParkedAndServedAgain(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: time.Minute, HeaderTimeout: 10 * time.Second})
	c := dial(t, s)
	for i := range 3 {
		code, body, err := c.get()
		if err != nil || code != 200 || body != c.c.LocalAddr().String() {
			t.Fatalf("request %d: %d %q %v", i, code, body, err)
		}
		waitStats(t, s, "parked", func(st conns.Stats) bool { return st.Parked == 1 && st.Parks == uint64(i+1) })
	}
	// Parked connections hold no goroutine: none is serving one (the
	// worker pool's idle goroutines wait for work, not on a connection).
	const n = 50
	for range n {
		if code, _, err := dial(t, s).get(); err != nil || code != 200 {
			t.Fatal(code, err)
		}
	}
	waitStats(t, s, "all parked", func(st conns.Stats) bool { return st.Parked == n+1 && st.Open == n+1 })
	if g := serving(); g != 0 {
		t.Errorf("%d goroutines serve a connection with all %d parked", g, n+1)
	}
}

// TestParkedConnectionClosesAtIdleTimeout: parking does not stretch
// the idle timeout, and a closed connection leaves the counts.
func TestParkedConnectionClosesAtIdleTimeout(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: 300 * time.Millisecond})
	c := dial(t, s)
	if code, _, err := c.get(); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("read on an idle connection: %v, want EOF (closed by the server)", err)
	}
	waitStats(t, s, "closed", func(st conns.Stats) bool { return st.Open == 0 && st.Parked == 0 })
}

// TestSilentConnectionClosesAtHeaderTimeout: a client that connects and
// sends nothing (or a header it never ends) is cut off at the header
// timeout, long before the idle timeout.
func TestSilentConnectionClosesAtHeaderTimeout(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: time.Hour, HeaderTimeout: 300 * time.Millisecond, ReadTimeout: time.Hour})
	tests := []struct{ name, send string }{
		{"nothing", ""},
		{"half a header", "GET / HTTP/1.1\r\nHost: x\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, s)
			io.WriteString(c.c, tt.send)
			start := time.Now()
			_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := io.ReadAll(c.br) // a 408 or nothing, then EOF
			if err != nil {
				t.Fatalf("read: %v, want the server to close", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("closed after %v", d)
			}
		})
	}
}

// TestKeepAliveRequestAfterHeaderTimeoutIsServed: the header timeout
// counts from a request's first byte, not from the last answer.
func TestKeepAliveRequestAfterHeaderTimeoutIsServed(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: time.Minute, HeaderTimeout: 200 * time.Millisecond})
	c := dial(t, s)
	if code, _, err := c.get(); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	waitStats(t, s, "parked", func(st conns.Stats) bool { return st.Parked == 1 })
	time.Sleep(400 * time.Millisecond) // the client thinks, past the header timeout
	if code, _, err := c.get(); err != nil || code != 200 {
		t.Fatalf("second request: %d %v", code, err)
	}
}

// TestPartialPipelinedRequestIsNotParked: bytes of a request already
// read keep the connection on its goroutine until the request is whole.
func TestPartialPipelinedRequestIsNotParked(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: time.Minute, HeaderTimeout: 10 * time.Second})
	c := dial(t, s)
	io.WriteString(c.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHo")
	if code, _, err := c.read(); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	time.Sleep(200 * time.Millisecond) // well past the linger: a parked connection would have lost "GET / HTTP/1.1\r\nHo"
	io.WriteString(c.c, "st: x\r\n\r\n")
	if code, _, err := c.read(); err != nil || code != 200 {
		t.Fatalf("pipelined request: %d %v", code, err)
	}
}

// TestLimitsRefuseConnections: past max_conns_per_ip a client gets 429,
// past max_conns 503; both are counted, and a closed connection frees
// its place.
func TestLimitsRefuseConnections(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ServerConfig
		code    int
		counted func(conns.Stats) uint64
	}{
		{"per ip", ServerConfig{MaxConnsPerIP: 2, MaxConns: 100}, 429, func(s conns.Stats) uint64 { return s.RefusedPerIP }},
		{"overall", ServerConfig{MaxConns: 2}, 503, func(s conns.Stats) uint64 { return s.RefusedMax }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.IdleTimeout = time.Minute
			s := startServer(t, tt.cfg)
			a, b := dial(t, s), dial(t, s)
			for _, c := range []*client{a, b} {
				if code, _, err := c.get(); err != nil || code != 200 {
					t.Fatal(code, err)
				}
			}
			third := dial(t, s)
			code, body, err := third.read() // answered without asking
			if err != nil || code != tt.code || !strings.Contains(body, "too many connections") {
				t.Fatalf("third connection: %d %q %v, want %d", code, body, err, tt.code)
			}
			if n := tt.counted(s.ConnStats()); n != 1 {
				t.Errorf("counted %d refusals, want 1", n)
			}
			a.c.Close()
			waitStats(t, s, "a closed", func(st conns.Stats) bool { return st.Open == 1 })
			if code, _, err := dial(t, s).get(); err != nil || code != 200 {
				t.Fatalf("after a close: %d %v", code, err)
			}
		})
	}
}

// TestParkedConnectionKeepsItsProxyAddress: the PROXY header is read
// once, on accept; requests after a park still come from its client.
func TestParkedConnectionKeepsItsProxyAddress(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: time.Minute, MaxConnsPerIP: 1,
		ProxyProtocol: &proxyproto.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	c := dial(t, s)
	io.WriteString(c.c, "PROXY TCP4 203.0.113.7 127.0.0.1 40000 80\r\n")
	for i := range 2 {
		code, body, err := c.get()
		if err != nil || code != 200 || body != "203.0.113.7:40000" {
			t.Fatalf("request %d: %d %q %v", i, code, body, err)
		}
		waitStats(t, s, "parked", func(st conns.Stats) bool { return st.Parked == 1 })
	}
	// The limit counts the header's client: another from 127.0.0.1 is fine.
	d := dial(t, s)
	io.WriteString(d.c, "PROXY TCP4 198.51.100.1 127.0.0.1 40001 80\r\n")
	if code, body, err := d.get(); err != nil || code != 200 || body != "198.51.100.1:40001" {
		t.Fatalf("second client: %d %q %v", code, body, err)
	}
}

// TestShutdownClosesParkedConnections: a parked connection is idle, and
// a shutdown closes it at once rather than waiting for it.
func TestShutdownClosesParkedConnections(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: time.Hour})
	c := dial(t, s)
	if code, _, err := c.get(); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	waitStats(t, s, "parked", func(st conns.Stats) bool { return st.Parked == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("read after shutdown: %v, want EOF", err)
	}
}

// TestRequestAfterProxyHeaderInOneSegmentKeepsItsHeaderTimeout: a
// request whose start came with the PROXY header (read ahead) and whose
// rest comes later is not cut off by the linger's short wait.
func TestRequestAfterProxyHeaderInOneSegmentKeepsItsHeaderTimeout(t *testing.T) {
	s := startServer(t, ServerConfig{IdleTimeout: time.Minute, HeaderTimeout: 10 * time.Second,
		ProxyProtocol: &proxyproto.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	c := dial(t, s)
	io.WriteString(c.c, "PROXY TCP4 203.0.113.7 127.0.0.1 40000 80\r\nGET / HTTP/1.1\r\nHo")
	time.Sleep(200 * time.Millisecond) // the client is slow, well within the header timeout
	io.WriteString(c.c, "st: x\r\n\r\n")
	if code, body, err := c.read(); err != nil || code != 200 || body != "203.0.113.7:40000" {
		t.Fatalf("request: %d %q %v", code, body, err)
	}
}
