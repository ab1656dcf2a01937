package main_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// rawConn is a keep-alive client connection the test drives by hand.
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, br: bufio.NewReader(c)}
}

func (r *rawConn) get(t *testing.T, path string) *http.Response {
	t.Helper()
	if _, err := io.WriteString(r.c, "GET "+path+" HTTP/1.1\r\nHost: conns.test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestIdleConnectionsAreParkedAndSlowClientsCutOff: idle keep-alive
// connections wait parked (counted in /metrics) and their next request is
// a cache hit like any; a client trickling a header is cut off at
// server.header_timeout though idle_timeout is a minute; past
// max_conns_per_ip a client gets 429.
func TestIdleConnectionsAreParkedAndSlowClientsCutOff(t *testing.T) {
	origin := cachedOrigin(t)
	cfg := testbed.WriteConfig(t, "", "server:\n  header_timeout: 500ms\n  idle_timeout: 60s\n  max_conns_per_ip: 12\n")
	rj := startRamjet(t, origin.URL, "--config", cfg)
	const n = 10
	parkThenHit(t, rj, rj.Addr, "main", n)

	cutOffAtHeaderTimeout(t, rj.Addr)

	// The slow one's place is given back once the server has closed it,
	// which may be just after the client saw the close.
	conns := `ramjet_client_connections{listener="main"}`
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, conns) == n }) {
		t.Fatalf("%s = %v after the slow client was cut off, want %d", conns, metricValue(t, rj.AdminURL, conns), n)
	}
	mustRefuseOverPerIP(t, rj, rj.Addr, "main") // 11 and 12 open with the first ten, 13 over
}

// TestSaturatedOriginKeepsServingHits: with the origin's one connection
// busy and no queue, an uncached request gets 503 with Retry-After at
// once while cached pages are served as before.
func TestSaturatedOriginKeepsServingHits(t *testing.T) {
	release := make(chan struct{})
	busy := make(chan struct{}, 1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			busy <- struct{}{}
			<-release
		}
		w.Header().Set("Cache-Control", "public, max-age=600")
		io.WriteString(w, "page "+r.URL.Path)
	}))
	defer origin.Close()
	defer close(release)
	cfg := testbed.WriteConfig(t, "", "origin:\n  max_conns: 1\n  max_queue: 0\n")
	rj := startRamjet(t, origin.URL, "--config", cfg)
	c := newClient(t)
	mustStatus(t, get(t, c, rj.URL+"/cached"), 200, "fill")
	go func() {
		resp, err := http.Get(rj.URL + "/slow")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-busy // the one origin connection is taken
	r := get(t, c, rj.URL+"/uncached")
	mustStatus(t, r, 503, "uncached while saturated")
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	for range 20 {
		r := get(t, c, rj.URL+"/cached")
		mustStatus(t, r, 200, "cached while saturated")
		if !r.CacheStatus().Hit {
			t.Fatalf("cached page not a hit: %q", r.Header.Get("Cache-Status"))
		}
	}
	if v := metricValue(t, rj.AdminURL, `ramjet_origin_errors_total{kind="busy"}`); v != 1 {
		t.Errorf("busy count %v, want 1", v)
	}
}

// TestLargeAnswersArriveWholeOnAKeepAliveConnection: hits and misses
// larger than the server's write buffer leave as one writev of head and
// body (proxy/vectored.go); on one keep-alive connection, pipelined or
// not, with HEAD, 304 and ranges between them, every answer arrives
// whole and in order.
func TestLargeAnswersArriveWholeOnAKeepAliveConnection(t *testing.T) {
	body := func(path string, n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(path + ";")
		}
		return b.String()[:n]
	}
	sizes := map[string]int{"/b8193": 8193, "/b9000": 9000, "/b30k": 30720, "/b2m": 2 << 20}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		w.Header().Set("ETag", `"`+r.URL.Path+`"`)
		io.WriteString(w, body(r.URL.Path, sizes[r.URL.Path]))
	}))
	defer origin.Close()
	rj := startRamjet(t, origin.URL)
	rc := dialRaw(t, rj.Addr)
	read := func(method, path string) (*http.Response, string) {
		t.Helper()
		_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(rc.br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: body: %v", method, path, err)
		}
		return resp, string(b)
	}
	send := func(reqs ...string) {
		t.Helper()
		if _, err := io.WriteString(rc.c, strings.Join(reqs, "")); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path, extra string) string {
		return "GET " + path + " HTTP/1.1\r\nHost: conns.test\r\n" + extra + "\r\n"
	}
	for round := range 2 { // a miss, then a hit
		for _, path := range []string{"/b8193", "/b9000", "/b30k", "/b2m"} {
			send(get(path, ""))
			resp, got := read("GET", path)
			if resp.StatusCode != 200 || got != body(path, sizes[path]) {
				t.Fatalf("round %d GET %s: %d, %d bytes, not the page", round, path, resp.StatusCode, len(got))
			}
		}
	}
	// Pipelined: a HEAD, a 304, a range and full hits in one write.
	send(get("/b30k", ""), "HEAD /b30k HTTP/1.1\r\nHost: conns.test\r\n\r\n",
		get("/b30k", "If-None-Match: \"/b30k\"\r\n"), get("/b2m", "Range: bytes=10000-29999\r\n"),
		get("/b9000", ""), get("/b2m", ""))
	if resp, got := read("GET", "/b30k"); resp.StatusCode != 200 || got != body("/b30k", 30720) {
		t.Fatalf("pipelined GET /b30k: %d, %d bytes", resp.StatusCode, len(got))
	}
	if resp, got := read("HEAD", "/b30k"); resp.StatusCode != 200 || got != "" || resp.ContentLength != 30720 {
		t.Fatalf("HEAD /b30k: %d, %d bytes, length %d", resp.StatusCode, len(got), resp.ContentLength)
	}
	if resp, got := read("GET", "/b30k"); resp.StatusCode != 304 || got != "" {
		t.Fatalf("conditional GET /b30k: %d, %d bytes", resp.StatusCode, len(got))
	}
	if resp, got := read("GET", "/b2m"); resp.StatusCode != 206 || got != body("/b2m", 2<<20)[10000:30000] {
		t.Fatalf("range of /b2m: %d, %d bytes", resp.StatusCode, len(got))
	}
	if resp, got := read("GET", "/b9000"); resp.StatusCode != 200 || got != body("/b9000", 9000) {
		t.Fatalf("pipelined GET /b9000: %d, %d bytes", resp.StatusCode, len(got))
	}
	if resp, got := read("GET", "/b2m"); resp.StatusCode != 200 || got != body("/b2m", 2<<20) {
		t.Fatalf("pipelined GET /b2m: %d, %d bytes", resp.StatusCode, len(got))
	}
}

// parkThenHit opens n keep-alive connections to addr, one request each,
// waits until all n wait parked on the listener named listener, and asks
// again on each: the answer is a cache hit like any.
func parkThenHit(t *testing.T, rj *testbed.Ramjet, addr, listener string, n int) {
	t.Helper()
	clients := make([]*rawConn, n)
	for i := range clients {
		clients[i] = dialRaw(t, addr)
		if resp := clients[i].get(t, "/p"); resp.StatusCode != 200 {
			t.Fatalf("first request: %d", resp.StatusCode)
		}
	}
	parked := `ramjet_client_connections_parked{listener="` + listener + `"}`
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, parked) == float64(n) }) {
		t.Fatalf("%s = %v, want %d", parked, metricValue(t, rj.AdminURL, parked), n)
	}
	for i, c := range clients {
		resp := c.get(t, "/p")
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Cache-Status"), "hit") {
			t.Fatalf("client %d after parking: %d %q", i, resp.StatusCode, resp.Header.Get("Cache-Status"))
		}
	}
}

// mustRefuseOverPerIP opens two connections to addr, each answered once
// so that it stays open as an idle keep-alive connection (a silent one
// would be closed at header_timeout, freeing its place before the next
// arrives on a slow machine), then one more, over max_conns_per_ip: it
// gets 429, counted on the listener named listener.
func mustRefuseOverPerIP(t *testing.T, rj *testbed.Ramjet, addr, listener string) {
	t.Helper()
	for range 2 {
		if resp := dialRaw(t, addr).get(t, "/p"); resp.StatusCode != 200 {
			t.Fatalf("connection under max_conns_per_ip: %d", resp.StatusCode)
		}
	}
	over := dialRaw(t, addr)
	_ = over.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(over.br, nil)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("connection over max_conns_per_ip: %v %v, want 429", resp, err)
	}
	refused := `ramjet_client_connections_refused_total{listener="` + listener + `",reason="per_ip"}`
	if v := metricValue(t, rj.AdminURL, refused); v != 1 {
		t.Errorf("%s = %v, want 1", refused, v)
	}
}

// cutOffAtHeaderTimeout: a client that trickles a header and never ends
// it is closed at about header_timeout (the configs here: 500 ms).
func cutOffAtHeaderTimeout(t *testing.T, addr string) {
	t.Helper()
	slow := dialRaw(t, addr)
	io.WriteString(slow.c, "GET /p HTTP/1.1\r\nHost: conns.test\r\n") // and never the end
	start := time.Now()
	_ = slow.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(slow.br); err != nil {
		t.Fatalf("slow client: %v, want the server to close", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("slow client cut off after %v, want about header_timeout", d)
	}
}
