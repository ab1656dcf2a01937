package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
)

// testOrigin counts requests and answers with what the test's handler says.
type testOrigin struct {
	*httptest.Server
	hits atomic.Int64
}

func newTestOrigin(t *testing.T, h http.HandlerFunc) *testOrigin {
	t.Helper()
	o := &testOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func testConfig(originURL string) Config {
	return Config{
		Origin: origin.Config{Servers: []string{originURL}, HeaderTimeout: 2 * time.Second},
		Default: Site{Cache: true, Grace: 10 * time.Second,
			BypassCookies: []string{"wordpress_logged_in_*"}, DropQueryParams: []string{"utm_*"}},
		HitForPass: 10 * time.Second,
		Compress:   Compress{Gzip: true, Brotli: true, MinSize: 64, Types: []string{"text/html"}},
	}
}

// startProxy serves cfg on a loopback port and returns its base URL.
func startProxy(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	p := newTestProxy(t, cfg, nil)
	return p, serveProxy(t, p)
}

// newTestProxy builds a proxy for cfg over fresh caches whose clock is
// clock (nil: the wall clock); serveProxy puts it on a port.
func newTestProxy(t testing.TB, cfg Config, clock func() int64) *Proxy {
	t.Helper()
	c, err := cache.New(cache.Config{Size: 64 << 20, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := cache.New(cache.Config{Size: 16 << 20, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, Stores{Public: c, Private: pc}, discardLog)
	if err != nil {
		t.Fatal(err)
	}
	p.Start(context.Background())
	t.Cleanup(func() {
		p.Close()
		c.Close()
		pc.Close()
	})
	return p
}

var discardLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// serveProxy serves p on a loopback port until the test ends and returns
// its base URL.
func serveProxy(t *testing.T, p *Proxy) string {
	t.Helper()
	srv := NewServer(ServerConfig{Name: "test", Addr: "127.0.0.1:0"}, p.ServeFastHTTP, discardLog)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // runs before newTestProxy's: the server stops first
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return "http://" + srv.Addr().String()
}

// testClock is a cache clock that moves only when the test says so.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *testClock) Now() int64              { return c.ns.Load() }
func (c *testClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

type reply struct {
	status      int
	body        string
	cacheStatus string
	header      http.Header
}

func get(t *testing.T, url string, hdr ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return roundTrip(t, req)
}

// roundTrip sends req on a connection of its own and reads the answer.
func roundTrip(t *testing.T, req *http.Request) reply {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, string(b), resp.Header.Get("Cache-Status"), resp.Header}
}

func TestMissThenHit(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("X-LiteSpeed-Tag", "a,b")
		io.WriteString(w, "hello "+r.URL.RawQuery)
	})
	_, base := startProxy(t, testConfig(o.URL))
	first := get(t, base+"/p?b=2&a=1")
	second := get(t, base+"/p?a=1&b=2&utm_source=x")
	if first.cacheStatus != "ramjet; fwd=miss; stored" || second.cacheStatus != "ramjet; hit" {
		t.Fatalf("cache status %q then %q", first.cacheStatus, second.cacheStatus)
	}
	if second.body != first.body || o.hits.Load() != 1 {
		t.Fatalf("origin hit %d times; bodies %q %q", o.hits.Load(), first.body, second.body)
	}
	if second.header.Get("X-Litespeed-Tag") != "" {
		t.Fatal("internal tag header reached the client")
	}
}

func TestSetCookieNeverShared(t *testing.T) {
	var n atomic.Int64
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("Set-Cookie", "session="+string(rune('a'+n.Add(1))))
		io.WriteString(w, "page")
	})
	_, base := startProxy(t, testConfig(o.URL))
	a := get(t, base+"/")
	b := get(t, base+"/")
	if a.header.Get("Set-Cookie") == b.header.Get("Set-Cookie") {
		t.Fatalf("two clients got the same cookie %q", a.header.Get("Set-Cookie"))
	}
	if !strings.Contains(b.cacheStatus, "fwd=uri-miss") || o.hits.Load() != 2 {
		t.Fatalf("second request: %q, origin hits %d", b.cacheStatus, o.hits.Load())
	}
}

func TestCoalescesConcurrentMisses(t *testing.T) {
	const clients = 10
	release := make(chan struct{})
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		<-release // until every client has reached the fill
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, "slow page")
	})
	p := newTestProxy(t, testConfig(o.URL), nil)
	var arrived atomic.Int64
	p.steps = newSteps(insertStage(p.steps.stages, "fill", stage{name: "count", run: func(*request) verdict {
		if arrived.Add(1) == clients {
			close(release)
		}
		return proceed
	}}))
	base := serveProxy(t, p)
	var wg sync.WaitGroup
	statuses := make([]string, clients)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = get(t, base+"/slow").cacheStatus
		}()
	}
	wg.Wait()
	if o.hits.Load() != 1 {
		t.Fatalf("origin saw %d requests for %d concurrent misses; statuses %q", o.hits.Load(), clients, statuses)
	}
}

// insertStage returns stages with st inserted before the stage named
// before.
func insertStage(stages []stage, before string, st stage) []stage {
	for i := range stages {
		if stages[i].name == before {
			return slices.Insert(slices.Clone(stages), i, st)
		}
	}
	panic("no stage " + before)
}

func TestBypassCookieSkipsCache(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=60")
		io.WriteString(w, "x")
	})
	_, base := startProxy(t, testConfig(o.URL))
	get(t, base+"/")
	if r := get(t, base+"/", "Cookie", "wordpress_logged_in_123=abc"); r.cacheStatus != "ramjet; fwd=bypass" {
		t.Fatalf("logged-in cookie: cache status %q", r.cacheStatus)
	}
}

// A response to a request with Authorization is stored only when it says
// it may be shared (RFC 9111 3.5); a shared one is then reused.
func TestCredentialsShareOnlyWhatTheResponseAllows(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", r.URL.Query().Get("cc"))
		io.WriteString(w, "for "+r.Header.Get("Authorization"))
	})
	_, base := startProxy(t, testConfig(o.URL))
	const alice, bob = "Basic YWxpY2U6eA==", "Basic Ym9iOng="
	tests := []struct {
		name, cc string
		reused   bool
	}{
		{"max-age alone is not shared", "max-age=60", false},
		{"public is shared", "public, max-age=60", true},
		{"s-maxage is shared", "s-maxage=60", true},
		{"must-revalidate is shared", "must-revalidate, max-age=60", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := base + "/?cc=" + url.QueryEscape(tt.cc)
			first := get(t, u, "Authorization", alice)
			second := get(t, u, "Authorization", bob)
			if reused := second.body == first.body; reused != tt.reused {
				t.Fatalf("second user got %q (%q) after %q, reused=%v want %v", second.body, second.cacheStatus, first.body, reused, tt.reused)
			}
		})
	}
}

func TestStaleIfErrorWhenOriginFails(t *testing.T) {
	var fail atomic.Bool
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Cache-Control", "max-age=1, stale-if-error=60")
		io.WriteString(w, "good")
	})
	cfg := testConfig(o.URL)
	cfg.Default.Grace = 0
	clock := newTestClock()
	base := serveProxy(t, newTestProxy(t, cfg, clock.Now))
	get(t, base+"/")
	fail.Store(true)
	clock.Advance(1100 * time.Millisecond) // max-age=1 runs out
	r := get(t, base+"/")
	if r.body != "good" || !strings.Contains(r.cacheStatus, "stale-if-error") {
		t.Fatalf("got %d %q %q", r.status, r.body, r.cacheStatus)
	}
}

func TestVaryHeaderSplitsVariants(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("Vary", "Accept-Language")
		io.WriteString(w, "lang="+r.Header.Get("Accept-Language"))
	})
	_, base := startProxy(t, testConfig(o.URL))
	en := get(t, base+"/", "Accept-Language", "en")
	de := get(t, base+"/", "Accept-Language", "de")
	en2 := get(t, base+"/", "Accept-Language", "en")
	if en.body != "lang=en" || de.body != "lang=de" || en2.body != "lang=en" || en2.cacheStatus != "ramjet; hit" {
		t.Fatalf("variants mixed: %q %q %q (%q)", en.body, de.body, en2.body, en2.cacheStatus)
	}
	if !strings.Contains(de.cacheStatus, "vary-miss") {
		t.Fatalf("second language: %q", de.cacheStatus)
	}
}

func TestOriginDownIs502AndSlowIs504(t *testing.T) {
	stuck := make(chan struct{})
	slow := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		<-stuck // answers only once the test is over
	})
	t.Cleanup(func() { close(stuck) }) // before the origin's Close, which waits for its handlers
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	tests := []struct {
		name, url string
		want      int
	}{
		{"origin down", down.URL, http.StatusBadGateway},
		{"origin slow", slow.URL, http.StatusGatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(tt.url)
			cfg.Origin.HeaderTimeout = 500 * time.Millisecond
			_, base := startProxy(t, cfg)
			if r := get(t, base+"/"); r.status != tt.want {
				t.Fatalf("status %d, want %d", r.status, tt.want)
			}
		})
	}
}

func TestUnsafeMethodInvalidates(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, r.Method)
	})
	_, base := startProxy(t, testConfig(o.URL))
	get(t, base+"/post")
	resp, err := http.Post(base+"/post", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Cache-Status"); got != "ramjet; fwd=method" {
		t.Fatalf("POST cache status %q", got)
	}
	if r := get(t, base+"/post"); !strings.Contains(r.cacheStatus, "fwd=miss") {
		t.Fatalf("GET after POST: %q, want a miss", r.cacheStatus)
	}
}

func mustPrefixes(t *testing.T, list ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, s := range list {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}
