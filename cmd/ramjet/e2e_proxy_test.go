package main_test

// End-to-end tests of the request path: bodies, compression, headers passed
// to the origin and back, validators, coalescing, stale serving and origin
// failures.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestBodiesAreByteExact(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "cache:\n  max_object_size: 8MiB\n")

	tests := []struct {
		name     string
		file     string
		ae       string
		hitCE    []string // acceptable Content-Encoding on the hit; "" = identity
		wantVary bool     // compressible: the response must carry Vary: Accept-Encoding
	}{
		{"binary identity", "static/big2m.bin", "", []string{""}, false},
		{"binary with gzip accepted", "static/big2m.bin", "gzip", []string{""}, false},
		{"text identity", "static/big2m.txt", "", []string{""}, true},
		{"text gzip", "static/big2m.txt", "gzip", []string{"gzip"}, true},
		{"text br", "static/big2m.txt", "br", []string{"br"}, true},
		{"text gzip or br", "static/big2m.txt", "gzip, deflate, br", []string{"gzip", "br"}, true},
		{"small page stays identity", "static/page725.html", "gzip, br", []string{""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := docrootSHA256(t, tt.file)
			// Each case gets its own cache key; nginx ignores the query.
			u := rj.URL + "/" + tt.file + "?case=" + strings.ReplaceAll(tt.name, " ", "-")
			var hdr []string
			if tt.ae != "" {
				hdr = append(hdr, "Accept-Encoding: "+tt.ae)
			}
			for _, step := range []string{"miss", "hit"} {
				r := get(t, c, u, hdr...)
				if step == "miss" {
					mustMissStored(t, r, step)
				} else {
					mustFreshHit(t, r, step)
				}
				ce := r.Header.Get("Content-Encoding")
				if step == "hit" && !slices.Contains(tt.hitCE, ce) {
					t.Errorf("%s: Content-Encoding %q, want one of %q", step, ce, tt.hitCE)
				}
				if tt.ae == "" && ce != "" {
					t.Errorf("%s: Content-Encoding %q for a client without Accept-Encoding", step, ce)
				}
				if cl := r.Header.Get("Content-Length"); cl != "" && cl != fmt.Sprint(len(r.Body)) {
					t.Errorf("%s: Content-Length %s but %d body bytes", step, cl, len(r.Body))
				}
				body := decodeBody(t, r)
				if got := sha256Hex(body); got != want {
					t.Errorf("%s: decoded body %d bytes sha256 %s, want the file's %s", step, len(body), got, want)
				}
				if step == "hit" && tt.wantVary && !strings.Contains(strings.ToLower(strings.Join(r.Header.Values("Vary"), ",")), "accept-encoding") {
					t.Errorf("%s: Vary %q on a compressible response, want it to name Accept-Encoding", step, r.Header.Values("Vary"))
				}
			}
		})
	}
}

// rawRequest writes req verbatim to addr and reads one response (as the
// answer to a HEAD when req is one).
func rawRequest(t *testing.T, addr, req string) result {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(15 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(strings.ReplaceAll(req, "\n", "\r\n"))); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(req, " ")
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatalf("read body: %v", err)
	}
	return result{Status: resp.StatusCode, Header: resp.Header, Body: body.Bytes()}
}

func TestForwardedAndHopByHopHeaders(t *testing.T) {
	t.Parallel()
	o, rj, _ := setup(t, "")
	req := `GET /e/forward?x=1 HTTP/1.1
Host: example.test
Connection: keep-alive, X-Test-Hop
X-Test-Hop: secret
Keep-Alive: timeout=5
TE: gzip
Trailer: X-Test-Trailer
Upgrade: example/1
Proxy-Authorization: Basic Zm9vOmJhcg==
X-Forwarded-For: 203.0.113.9
X-Test-Keep: yes
Cookie: a=1

`
	hopByHop := []string{"x-test-hop", "keep-alive", "te", "trailer", "upgrade", "proxy-authorization"}

	// Control: the origin app does see these headers when sent directly,
	// so their absence below is ramjet's doing.
	direct := rawRequest(t, o.Addr, req).Echo()
	for _, h := range hopByHop {
		if direct["hdr."+h] == "" {
			t.Fatalf("control: origin app did not echo %s when sent directly; echo: %v", h, direct)
		}
	}

	r := rawRequest(t, rj.Addr, req)
	mustStatus(t, r, http.StatusOK, "proxied GET")
	e := r.Echo()
	for _, h := range hopByHop {
		if v, ok := e["hdr."+h]; ok {
			t.Errorf("hop-by-hop header %s reached the origin: %q", h, v)
		}
	}
	if strings.Contains(strings.ToLower(e["hdr.connection"]), "x-test-hop") {
		t.Errorf("origin saw the client's Connection header %q", e["hdr.connection"])
	}
	want := map[string]string{
		"hdr.host":              "example.test",
		"hdr.x-forwarded-for":   "203.0.113.9, 127.0.0.1",
		"hdr.x-forwarded-proto": "http",
		"hdr.x-forwarded-host":  "example.test",
		"hdr.x-test-keep":       "yes",
		"hdr.cookie":            "a=1",
	}
	for k, v := range want {
		if e[k] != v {
			t.Errorf("origin saw %s = %q, want %q", strings.TrimPrefix(k, "hdr."), e[k], v)
		}
	}

	// Without a client X-Forwarded-For ramjet starts the list.
	r = rawRequest(t, rj.Addr, "GET /e/forward?x=2 HTTP/1.1\nHost: example.test\nConnection: close\n\n")
	if got := r.Echo()["hdr.x-forwarded-for"]; got != "127.0.0.1" {
		t.Errorf("X-Forwarded-For without a client value: %q, want 127.0.0.1", got)
	}
}

func TestInternalHeadersStripped(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	internal := []string{
		"X-LiteSpeed-Cache-Control: public, max-age=60",
		"X-LiteSpeed-Tag: 368_Po.1,368_F",
		"X-LiteSpeed-Vary: cookie=unused_cookie",
		"Surrogate-Key: post-1 front",
		"Cache-Tag: post-1,front",
		"xkey: post-1 front",
		"Surrogate-Control: max-age=60",
	}
	query := "?" + hq(append([]string{"X-Test-App: kept"}, internal...)...)

	tests := []struct {
		name  string
		debug bool
	}{
		{"stripped by default", false},
		{"kept with debug_headers", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf("defaults:\n  debug_headers: %v\n", tt.debug)))
			c := newClient(t)
			u := rj.URL + "/e/internal" + query
			for _, step := range []string{"miss", "hit"} {
				r := get(t, c, u)
				if step == "miss" {
					mustMissStored(t, r, step)
				} else {
					mustFreshHit(t, r, step)
				}
				if r.Header.Get("X-Test-App") != "kept" {
					t.Errorf("%s: application header X-Test-App missing", step)
				}
				for _, h := range internal {
					name, _, _ := strings.Cut(h, ":")
					if got := r.Header.Get(name) != ""; got != tt.debug {
						t.Errorf("%s: header %s present=%v, want %v", step, name, got, tt.debug)
					}
				}
			}
		})
	}
}

func TestConditionalRequestsAnsweredFromCache(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	const lastMod = "Mon, 02 Jan 2006 15:04:05 GMT"
	u := rj.URL + "/e/cond?" + hq("Cache-Control: max-age=60", `ETag: "v1"`, "Last-Modified: "+lastMod)
	full := get(t, c, u)
	mustMissStored(t, full, "GET")

	tests := []struct {
		name   string
		hdr    string
		status int
	}{
		{"matching etag", `If-None-Match: "v1"`, http.StatusNotModified},
		{"etag in list", `If-None-Match: "x", "v1"`, http.StatusNotModified},
		{"weak comparison", `If-None-Match: W/"v1"`, http.StatusNotModified},
		{"star", `If-None-Match: *`, http.StatusNotModified},
		{"other etag", `If-None-Match: "v2"`, http.StatusOK},
		{"not modified since", "If-Modified-Since: " + lastMod, http.StatusNotModified},
		{"modified since", "If-Modified-Since: Sun, 01 Jan 2006 00:00:00 GMT", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, c, u, tt.hdr)
			mustStatus(t, r, tt.status, tt.hdr)
			if cs := r.CacheStatus(); !cs.Hit || cs.Fwd != "" {
				t.Errorf("Cache-Status %q, want ramjet; hit", cs.Raw)
			}
			if tt.status == http.StatusNotModified {
				if len(r.Body) != 0 {
					t.Errorf("304 with %d body bytes", len(r.Body))
				}
				if r.Header.Get("ETag") != `"v1"` {
					t.Errorf("304 ETag %q, want \"v1\"", r.Header.Get("ETag"))
				}
				return
			}
			if r.ID() != full.ID() {
				t.Errorf("body %q, want the stored %q", r.ID(), full.ID())
			}
		})
	}
	if n := o.waitRequests(t, "/e/cond", 1); n != 1 {
		t.Errorf("origin saw %d requests, want 1", n)
	}
}

func TestConcurrentMissesCoalesced(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	const n = 20
	u := rj.URL + "/e/coalesce?sleep_ms=500&" + hq("Cache-Control: max-age=60")

	results := parallelGet(t, c, n, u)
	stored := 0
	for i, r := range results {
		mustStatus(t, r, http.StatusOK, fmt.Sprintf("request %d", i))
		cs := r.CacheStatus()
		switch {
		case cs.MissStored():
			stored++
		case cs.Fwd == "miss" && cs.Collapsed, cs.FreshHit():
		default:
			t.Errorf("request %d: Cache-Status %q, want one miss stored and the rest collapsed or hits", i, cs.Raw)
		}
		if r.ID() != results[0].ID() {
			t.Errorf("request %d: body %q, request 0 got %q: want one shared origin response", i, r.ID(), results[0].ID())
		}
	}
	if stored != 1 {
		t.Errorf("%d responses say stored, want exactly 1", stored)
	}
	if got := o.waitRequests(t, "/e/coalesce", 1); got != 1 {
		t.Errorf("origin saw %d requests for %d concurrent misses, want 1", got, n)
	}
}

func TestStaleWhileRevalidate(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "defaults:\n  grace: 30s\n")
	path := "/e/swr"
	u := rj.URL + path + "?sleep_ms=1000&" + hq("Cache-Control: max-age=1")
	old := get(t, c, u)
	mustMissStored(t, old, "first GET")

	// The first answer after max-age=1 ran out (within grace) is stale and
	// starts the 1 s background refresh; more requests meanwhile get the
	// stale copy at once.
	first, _, ok := awaitChange(t, c, u, old.ID(), ttlWait)
	if !ok {
		t.Fatalf("still a fresh hit %v after a max-age=1 store", ttlWait)
	}
	start := time.Now()
	stale := append(parallelGet(t, c, 5, u), first)
	if el := time.Since(start); el > 800*time.Millisecond {
		t.Errorf("stale responses took %v; they must not wait for the 1 s refresh", el)
	}
	for i, r := range stale {
		mustStatus(t, r, http.StatusOK, fmt.Sprintf("stale request %d", i))
		if cs := r.CacheStatus(); !cs.Hit || cs.Fwd != "stale" || cs.Detail != "" {
			t.Errorf("stale request %d: Cache-Status %q, want ramjet; hit; fwd=stale", i, cs.Raw)
		}
		if r.ID() != old.ID() {
			t.Errorf("stale request %d: body %q, want the stale %q", i, r.ID(), old.ID())
		}
	}

	var fresh result
	if !testbed.Poll(5*time.Second, func() bool {
		fresh = get(t, c, u)
		return fresh.CacheStatus().FreshHit() && fresh.ID() != old.ID()
	}) {
		t.Fatalf("no refreshed entry within 5 s; last Cache-Status %q body %q", fresh.Header.Get("Cache-Status"), fresh.ID())
	}
	if got := o.waitRequests(t, path, 2); got != 2 {
		t.Errorf("origin saw %d requests, want 2 (one fill, one background refresh)", got)
	}
}

func TestStaleIfError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		grace string // defaults.grace
		cc    string // the page's Cache-Control
		until time.Duration
	}{
		// grace from the config covers origin failures: 1 s max-age + 3 s.
		{"config grace", "3s", "max-age=1", 4 * time.Second},
		// stale-if-error from the response, with no configured grace.
		{"stale-if-error directive", "0s", "max-age=1, stale-if-error=4", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, rj, c := setup(t, "defaults:\n  grace: "+tt.grace+"\n")
			u := rj.URL + "/e/sie?" + hq("Cache-Control: "+tt.cc)
			old := get(t, c, u)
			mustMissStored(t, old, "first GET")
			stored := time.Now()

			o.Stop()
			mustStale := func(r result) bool {
				t.Helper()
				mustStatus(t, r, http.StatusOK, "GET with origin down, within grace")
				if r.ID() != old.ID() {
					t.Fatalf("body %q, want the stale %q", r.ID(), old.ID())
				}
				cs := r.CacheStatus()
				if !cs.Hit || cs.Fwd != "stale" {
					t.Fatalf("Cache-Status %q, want ramjet; hit; fwd=stale", cs.Raw)
				}
				return cs.Detail == "stale-if-error"
			}
			r, _, ok := awaitChange(t, c, u, old.ID(), ttlWait) // max-age=1 runs out, within grace
			if !ok {
				t.Fatalf("still a fresh hit %v after a max-age=1 store", ttlWait)
			}
			// Allow a first answer as stale-while-revalidate: the origin's
			// failure may only be known after that request's refresh.
			if !mustStale(r) && !testbed.Poll(time.Second, func() bool {
				r = get(t, c, u)
				return mustStale(r)
			}) {
				t.Errorf("Cache-Status %q with the origin down, want ramjet; hit; fwd=stale; detail=stale-if-error", r.Header.Get("Cache-Status"))
			}

			// Past the stale-if-error window the entry is no longer served:
			// poll for the 502 (real time, see ttlWait), until the window
			// plus the margin a fixed sleep used to wait.
			if !testbed.Poll(time.Until(stored.Add(tt.until+1500*time.Millisecond)), func() bool {
				r = get(t, c, u)
				return r.Status == http.StatusBadGateway
			}) {
				t.Errorf("GET past the stale window with origin down: status %d (Cache-Status %q), want 502", r.Status, r.Header.Get("Cache-Status"))
			}
		})
	}
}

func TestOriginDownGives502(t *testing.T) {
	t.Parallel()
	stopped := startOrigin(t)
	stopped.Stop()
	never := fmt.Sprintf("http://127.0.0.1:%d", testbed.FreePort(t))

	for _, tt := range []struct{ name, origin string }{
		{"stopped origin", stopped.URL},
		{"nothing listening", never},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rj := startRamjet(t, tt.origin)
			c := newClient(t)
			for i := range 3 {
				start := time.Now()
				r := get(t, c, rj.URL+"/e/down")
				if r.Status != http.StatusBadGateway {
					t.Errorf("request %d: status %d, want 502", i, r.Status)
				}
				if len(r.Body) == 0 || len(r.Body) > 1024 {
					t.Errorf("request %d: body of %d bytes, want a short message", i, len(r.Body))
				}
				if el := time.Since(start); el > 5*time.Second {
					t.Errorf("request %d took %v", i, el)
				}
			}
		})
	}
}

func TestSlowOriginGives504(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "origin:\n  header_timeout: 1s\n")
	start := time.Now()
	r := get(t, c, rj.URL+"/e/slow?sleep_ms=3000")
	el := time.Since(start)
	if r.Status != http.StatusGatewayTimeout {
		t.Errorf("status %d, want 504", r.Status)
	}
	if el < 900*time.Millisecond || el > 2500*time.Millisecond {
		t.Errorf("answered after %v, want about the 1 s header_timeout", el)
	}
	if len(r.Body) == 0 || len(r.Body) > 1024 {
		t.Errorf("body of %d bytes, want a short message", len(r.Body))
	}
	mustStatus(t, get(t, c, rj.URL+"/e/slow-after"), http.StatusOK, "a fast request afterwards")
}

func TestRequestLimits(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "server:\n  max_request_body: 1MiB\n  max_header_bytes: 16KiB\n")
	u := rj.URL + "/e/limits"

	// Each case is sent several times on fresh connections: a rejection
	// must reach the client every time, not only when it wins the race
	// against a TCP reset (RFC 9112 section 9.6: close in stages).
	const tries = 10
	tests := []struct {
		name    string
		body    int  // request body bytes
		chunked bool // send without Content-Length
		header  int  // bytes of an extra X-Test-Big header
		status  int
	}{
		{"body under limit", 512 << 10, false, 0, http.StatusOK},
		{"chunked body under limit", 512 << 10, true, 0, http.StatusOK},
		{"body over limit", 2 << 20, false, 0, http.StatusRequestEntityTooLarge},
		{"chunked body over limit", 2 << 20, true, 0, http.StatusRequestEntityTooLarge},
		{"header under limit", 0, false, 8 << 10, http.StatusOK},
		{"header over limit", 0, false, 20 << 10, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("b"), tt.body)
			failed := 0
			for try := range tries {
				got, err := postLimited(c, u, body, tt.chunked, tt.header)
				switch {
				case err != nil:
					t.Errorf("try %d: %v", try, err)
				case got.Status != tt.status:
					t.Errorf("try %d: status %d, want %d; body %.200q", try, got.Status, tt.status, got.Body)
				case tt.status == http.StatusOK && tt.body > 0 && got.Echo()["reqbody-sha256"] != sha256Hex(body):
					t.Errorf("try %d: origin got a body of %s bytes with another sha256", try, got.Echo()["reqbody-len"])
				default:
					continue
				}
				failed++
			}
			if failed > 0 {
				t.Errorf("%d of %d tries failed", failed, tries)
			}
		})
	}
}

// postLimited POSTs body (chunked when asked, with an X-Test-Big header of
// header bytes when > 0) on a new connection and reads the response.
func postLimited(c *http.Client, u string, body []byte, chunked bool, header int) (result, error) {
	req, err := newRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return result{}, err
	}
	req.Close = true // a fresh connection per try
	if chunked {
		req.ContentLength = -1
		req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body))) // hide the length
		req.GetBody = nil
	}
	if header > 0 {
		req.Header.Set("X-Test-Big", strings.Repeat("h", header))
	}
	resp, err := c.Do(req)
	if err != nil {
		return result{}, fmt.Errorf("POST: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{}, fmt.Errorf("read body: %w", err)
	}
	return result{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}
