package main_test

// Client side of the end-to-end harness: HTTP requests, response parsing
// (echo.php bodies, RFC 9211 Cache-Status) and assertions shared by tests.

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	brrr "github.com/molecule-man/go-brrr"
	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// newClient returns a client with its own transport: no transparent
// decompression (tests set Accept-Encoding themselves), no redirects, a
// timeout so nothing hangs, idle connections closed at cleanup.
func newClient(t testing.TB) *http.Client {
	tr := &http.Transport{
		DisableCompression:  true,
		MaxIdleConnsPerHost: 64,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// result is a fully read response.
type result struct {
	Status int
	Header http.Header
	Body   []byte
}

// CacheStatus parses the response's Cache-Status header.
func (r result) CacheStatus() cacheStatus { return parseCacheStatus(r.Header.Get("Cache-Status")) }

// Echo parses an echo.php body.
func (r result) Echo() map[string]string { return parseEcho(r.Body) }

// ID is the unique id echo.php put in the body: equal ids mean one origin
// response.
func (r result) ID() string { return r.Echo()["id"] }

// newRequest builds a request; hdr entries are "Name: value" ("Host: x" sets
// the Host).
func newRequest(method, url string, body io.Reader, hdr ...string) (*http.Request, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return nil, err
	}
	for _, h := range hdr {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("header %q: want Name: value", h)
		}
		value = strings.TrimSpace(value)
		if strings.EqualFold(name, "Host") {
			req.Host = value
			continue
		}
		req.Header.Add(name, value)
	}
	return req, nil
}

// tryDo sends a request and reads the whole body; safe in goroutines.
func tryDo(c *http.Client, method, url string, body io.Reader, hdr ...string) (result, error) {
	req, err := newRequest(method, url, body, hdr...)
	if err != nil {
		return result{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{}, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	return result{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// do is tryDo that fails the test on a transport error.
func do(t testing.TB, c *http.Client, method, url string, hdr ...string) result {
	t.Helper()
	r, err := tryDo(c, method, url, nil, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func get(t testing.TB, c *http.Client, url string, hdr ...string) result {
	t.Helper()
	return do(t, c, http.MethodGet, url, hdr...)
}

// mustStatus fails unless r has the given status.
func mustStatus(t testing.TB, r result, want int, what string) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s: status %d, want %d; Cache-Status %q; body %.300q", what, r.Status, want, r.Header.Get("Cache-Status"), r.Body)
	}
}

// decodeBody undoes Content-Encoding (gzip, br or identity).
func decodeBody(t testing.TB, r result) []byte {
	t.Helper()
	var rd io.Reader
	switch ce := r.Header.Get("Content-Encoding"); ce {
	case "", "identity":
		return r.Body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		rd = zr
	case "br":
		rd = brrr.NewReader(bytes.NewReader(r.Body))
	default:
		t.Fatalf("unexpected Content-Encoding %q", ce)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("decode %s body: %v", r.Header.Get("Content-Encoding"), err)
	}
	return b
}

// parseEcho reads the "key: value" header block of an echo.php body. Keys
// are lower-cased ("hdr.x-forwarded-for").
func parseEcho(body []byte) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(string(body)) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		m[strings.ToLower(k)] = v
	}
	return m
}

// cacheStatus is one parsed RFC 9211 Cache-Status entry.
type cacheStatus struct {
	Raw       string
	Cache     string // the cache name, "ramjet"
	Hit       bool
	Fwd       string // miss, vary-miss, uri-miss, stale, bypass, method, ...
	Stored    bool
	Collapsed bool
	Detail    string
}

func parseCacheStatus(v string) cacheStatus {
	cs := cacheStatus{Raw: v}
	// A proxy in front could add a second entry; ours is the last one.
	if i := strings.LastIndex(v, ","); i >= 0 {
		v = v[i+1:]
	}
	parts := strings.Split(v, ";")
	cs.Cache = strings.TrimSpace(parts[0])
	for _, p := range parts[1:] {
		k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
		val = strings.Trim(val, `"`)
		switch strings.ToLower(k) {
		case "hit":
			cs.Hit = true
		case "fwd":
			cs.Fwd = val
		case "stored":
			cs.Stored = true
		case "collapsed":
			cs.Collapsed = true
		case "detail":
			cs.Detail = val
		}
	}
	return cs
}

// FreshHit: served from cache without contacting the origin.
func (cs cacheStatus) FreshHit() bool { return cs.Cache == "ramjet" && cs.Hit && cs.Fwd == "" }

// MissStored: forwarded as a miss and stored.
func (cs cacheStatus) MissStored() bool {
	return cs.Cache == "ramjet" && !cs.Hit && cs.Fwd == "miss" && cs.Stored
}

// NotStored: forwarded (miss or hit-for-pass) and not stored.
func (cs cacheStatus) NotStored() bool {
	return cs.Cache == "ramjet" && !cs.Hit && (cs.Fwd == "miss" || cs.Fwd == "uri-miss") && !cs.Stored
}

// ---------------------------------------------------------------------------
// Small helpers for tests

// setup starts an origin and a ramjet in front of it, configured by the YAML
// document cfg when it is not empty, and returns a fresh client.
func setup(t testing.TB, cfg string) (*origin, *testbed.Ramjet, *http.Client) {
	t.Helper()
	o := startOrigin(t)
	var args []string
	if cfg != "" {
		args = []string{"--config", testbed.WriteConfig(t, "", cfg)}
	}
	rj := startRamjet(t, o.URL, args...)
	return o, rj, newClient(t)
}

// ttlWait bounds waiting for a max-age=1 entry to expire. Such waits
// stay in real time: max-age runs on the built binary's clock, which a
// test cannot move, and an Age header cannot make an entry stale on
// arrival (a response with no freshness left is not stored at all). So
// tests poll until the entry changes (awaitChange) instead of sleeping
// past its expiry: they wait about the one second and no longer.
const ttlWait = 5 * time.Second

// hq encodes response headers for echo.php: hq("Cache-Control: max-age=60")
// is "h[]=Cache-Control%3A+max-age%3D60".
func hq(headers ...string) string {
	parts := make([]string, len(headers))
	for i, h := range headers {
		parts[i] = "h[]=" + url.QueryEscape(h)
	}
	return strings.Join(parts, "&")
}

// mustFreshHit fails unless r is a fresh hit with an Age header.
func mustFreshHit(t testing.TB, r result, what string) {
	t.Helper()
	mustStatus(t, r, http.StatusOK, what)
	if cs := r.CacheStatus(); !cs.FreshHit() {
		t.Fatalf("%s: Cache-Status %q, want a fresh hit (ramjet; hit)", what, cs.Raw)
	}
	if age, err := strconv.Atoi(r.Header.Get("Age")); err != nil || age < 0 {
		t.Fatalf("%s: Age %q on a hit, want a non-negative integer", what, r.Header.Get("Age"))
	}
}

// mustMissStored fails unless r is a 200 miss that was stored.
func mustMissStored(t testing.TB, r result, what string) {
	t.Helper()
	mustStatus(t, r, http.StatusOK, what)
	if cs := r.CacheStatus(); !cs.MissStored() {
		t.Fatalf("%s: Cache-Status %q, want ramjet; fwd=miss; stored", what, cs.Raw)
	}
}

// mustNotStored fails unless r is a 200 forwarded response that was not
// stored (fwd=miss or fwd=uri-miss without "stored").
func mustNotStored(t testing.TB, r result, what string) {
	t.Helper()
	mustStatus(t, r, http.StatusOK, what)
	if cs := r.CacheStatus(); !cs.NotStored() {
		t.Fatalf("%s: Cache-Status %q, want ramjet; fwd=miss (or uri-miss) without stored", what, cs.Raw)
	}
}

// parallelGet sends n identical GETs at once (released together) and returns
// the results; transport errors are reported with t.Errorf.
func parallelGet(t testing.TB, c *http.Client, n int, url string, hdr ...string) []result {
	t.Helper()
	results := make([]result, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = tryDo(c, http.MethodGet, url, nil, hdr...)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	return results
}

// withTimeout returns a context that ends after d, cancelled at cleanup.
func withTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// httpDate formats t as an HTTP date for Expires and friends.
func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
