package main_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// A keep-alive connection serving a request no longer moves its read
// timer to header_timeout at the request's first byte; the linger's,
// armed a moment before, stays until a read needs the later one
// (proxy/conns/readdeadline.go). These hold what a client sees: a header
// that trickles in past the linger is served, and one that never ends is
// cut at header_timeout from its first byte, not at the linger.

// keepAliveOnItsGoroutine is a connection to ramjet answered three times
// back to back: parked after its first answer, woken by the second
// request, and lingering on its goroutine since (a busy client's).
func keepAliveOnItsGoroutine(t *testing.T, addr string) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	for range 3 {
		if resp := c.get(t, "/p"); resp.StatusCode != 200 {
			t.Fatalf("warm-up request: %d", resp.StatusCode)
		}
	}
	return c
}

// TestAKeepAliveHeaderTricklingInPastTheLingerIsServed: the next request's
// first line comes at once, the rest of its header 300 ms later (past
// the 20 ms linger whose deadline is armed, within header_timeout).
func TestAKeepAliveHeaderTricklingInPastTheLingerIsServed(t *testing.T) {
	origin := cachedOrigin(t)
	cfg := testbed.WriteConfig(t, "", "server:\n  header_timeout: 2s\n  idle_timeout: 60s\n")
	rj := startRamjet(t, origin.URL, "--config", cfg)
	c := keepAliveOnItsGoroutine(t, rj.Addr)
	for i := range 3 {
		if _, err := io.WriteString(c.c, "GET /p HTTP/1.1\r\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the client's pause mid-header is what is tested
		if _, err := io.WriteString(c.c, "Host: conns.test\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("trickled request %d: %v, want an answer", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Cache-Status"), "hit") {
			t.Fatalf("trickled request %d: %d %q, want a hit", i, resp.StatusCode, resp.Header.Get("Cache-Status"))
		}
	}
}

// TestAKeepAliveHeaderThatNeverEndsIsCutAtTheHeaderTimeout: on a busy
// keep-alive connection, a header begun and never ended is closed about
// header_timeout after its first byte: not at the linger's deadline
// armed before it, nor at idle_timeout.
func TestAKeepAliveHeaderThatNeverEndsIsCutAtTheHeaderTimeout(t *testing.T) {
	origin := cachedOrigin(t)
	cfg := testbed.WriteConfig(t, "", "server:\n  header_timeout: 1s\n  idle_timeout: 60s\n")
	rj := startRamjet(t, origin.URL, "--config", cfg)
	c := keepAliveOnItsGoroutine(t, rj.Addr)
	start := time.Now()
	if _, err := io.WriteString(c.c, "GET /p HTTP/1.1\r\nHost: conns.test\r\n"); err != nil { // and never the end
		t.Fatal(err)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(c.br); err != nil {
		t.Fatalf("unended header: %v, want the server to close", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 10*time.Second {
		t.Fatalf("unended header cut after %v, want about header_timeout (1s)", d)
	}
}

// TestTheOriginSeesTheClientOfAWokenConnection: the client's address,
// read once at accept (conns.Conn.PeerAddrPort), is what the origin gets
// in X-Forwarded-For on a connection's first request, after it was
// parked (its net.Conn closed, the socket kept) and woken, and on the
// busy connection after that.
func TestTheOriginSeesTheClientOfAWokenConnection(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Forwarded-For"))
		mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, "page "+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	rj := startRamjet(t, origin.URL)
	c := dialRaw(t, rj.Addr)
	c.get(t, "/a") // parked after this answer
	parked := `ramjet_client_connections_parked{listener="main"}`
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, parked) == 1 }) {
		t.Fatalf("%s = %v, want 1", parked, metricValue(t, rj.AdminURL, parked))
	}
	c.get(t, "/b") // woken
	c.get(t, "/c") // lingering on its goroutine
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("origin saw %d requests, want 3", len(seen))
	}
	for i, xff := range seen {
		if xff != "127.0.0.1" {
			t.Errorf("request %d: X-Forwarded-For %q, want the client's 127.0.0.1", i, xff)
		}
	}
}
