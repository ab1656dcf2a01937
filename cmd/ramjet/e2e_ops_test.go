package main_test

// End-to-end tests of operating ramjet: the command line, the admin
// listener, hot reload and graceful shutdown.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestReloadUnderLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := func(ttl string, grace int) string {
		return fmt.Sprintf("defaults:\n  default_ttl: %s\n  grace: %ds\n", ttl, grace)
	}
	path := testbed.WriteConfig(t, dir, cfg("0s", 10))
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", path)
	c := newClient(t)
	cached := rj.URL + "/e/load-cached?" + hq("Cache-Control: max-age=60")
	uncached := rj.URL + "/e/load-uncached"
	mustMissStored(t, get(t, c, cached), "priming GET")

	const (
		workers     = 4
		maxRequests = 3000 // per worker
		loadFor     = 3 * time.Second
	)
	var (
		ok       atomic.Int64
		mu       sync.Mutex // guards failures
		failures []string
		wg       sync.WaitGroup
	)
	stop := time.Now().Add(loadFor)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < maxRequests && time.Now().Before(stop); i++ {
				u := cached
				if (i+w)%2 == 1 {
					u = uncached
				}
				r, err := tryDo(c, http.MethodGet, u, nil)
				if err == nil && r.Status == http.StatusOK {
					ok.Add(1)
					continue
				}
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Sprintf("%s: %v", u, err))
				} else {
					failures = append(failures, fmt.Sprintf("%s: status %d body %.100q", u, r.Status, r.Body))
				}
				mu.Unlock()
			}
		}()
	}

	// Rewrite the config (rename, as editors do) and send SIGHUP while the
	// load runs; the last version turns on a default TTL.
	for i := range 6 {
		time.Sleep(loadFor / 8) // pacing, not synchronisation
		testbed.WriteConfig(t, dir, cfg("0s", 11+i))
		if i%2 == 1 {
			rj.Signal(t, syscall.SIGHUP)
		}
	}
	testbed.WriteConfig(t, dir, cfg("60s", 10))
	rj.Signal(t, syscall.SIGHUP)
	wg.Wait()

	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed during reloads; first: %s", len(failures), int(ok.Load())+len(failures), strings.Join(failures[:min(5, len(failures))], "; "))
	}
	if ok.Load() < 100 {
		t.Errorf("only %d requests succeeded in %v", ok.Load(), loadFor)
	}
	if !rj.Alive() {
		t.Fatal("ramjet exited during reloads")
	}

	// default_ttl: 60s is now in effect: a response without freshness
	// headers is stored (each try uses a new URL).
	var r result
	i := 0
	if !testbed.Poll(5*time.Second, func() bool {
		i++
		r = get(t, c, fmt.Sprintf("%s/e/load-after?i=%d", rj.URL, i))
		return r.CacheStatus().MissStored()
	}) {
		t.Fatalf("default_ttl: 60s not in effect 5 s after the last reload; Cache-Status %q", r.Header.Get("Cache-Status"))
	}
	mustFreshHit(t, get(t, c, fmt.Sprintf("%s/e/load-after?i=%d", rj.URL, i)), "GET after reload")
	mustFreshHit(t, get(t, c, cached), "entry stored before the reloads")
}

func TestInvalidReloadKeepsOldConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := testbed.WriteConfig(t, dir, "defaults:\n  default_ttl: 60s\n")
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", path)
	c := newClient(t)
	before := get(t, c, rj.URL+"/e/invalid-a")
	mustMissStored(t, before, "GET under default_ttl: 60s")

	// logsAgain waits until ramjet logs something naming the config file
	// after offset, i.e. it saw the change and said why it was rejected.
	logsAgain := func(offset int, how string) {
		t.Helper()
		var out string
		if !testbed.Poll(5*time.Second, func() bool {
			out = rj.Output()
			return strings.Contains(out[offset:], filepath.Base(path))
		}) {
			t.Fatalf("%s: no log line naming %s within 5 s; new output:\n%s", how, filepath.Base(path), out[offset:])
		}
	}

	bad := []struct{ name, yaml string }{
		{"syntax error", "defaults:\n  default_ttl: [60s\n"},
		{"unknown key", "defaults:\n  default_ttl: 0s\n  no_such_key: 1\n"},
		{"bad value", "defaults:\n  default_ttl: banana\n"},
	}
	for i, b := range bad {
		offset := len(rj.Output())
		testbed.WriteConfig(t, dir, b.yaml)
		logsAgain(offset, b.name)
		rj.Signal(t, syscall.SIGHUP) // an explicit reload of the same bad file changes nothing either

		if !rj.Alive() {
			t.Fatalf("%s: ramjet exited", b.name)
		}
		mustStatus(t, get(t, c, rj.AdminURL+"/healthz"), http.StatusOK, b.name+": healthz")
		mustMissStored(t, get(t, c, fmt.Sprintf("%s/e/invalid-b?i=%d", rj.URL, i)), b.name+": old default_ttl still applies")
		mustFreshHit(t, get(t, c, rj.URL+"/e/invalid-a"), b.name+": cache kept")
	}

	testbed.WriteConfig(t, dir, "defaults:\n  default_ttl: 0s\n")
	var r result
	i := 0
	if !testbed.Poll(5*time.Second, func() bool {
		i++
		r = get(t, c, fmt.Sprintf("%s/e/invalid-c?i=%d", rj.URL, i))
		return r.CacheStatus().NotStored()
	}) {
		t.Fatalf("valid config with default_ttl: 0s not picked up within 5 s; Cache-Status %q", r.Header.Get("Cache-Status"))
	}
	again := get(t, c, rj.URL+"/e/invalid-a")
	mustFreshHit(t, again, "entry stored before the reload")
	if again.ID() != before.ID() {
		t.Errorf("cache entry changed across reload: %q, want %q", again.ID(), before.ID())
	}
}

// exampleConfig returns the repository's documented example configuration.
func exampleConfig(t *testing.T) string {
	t.Helper()
	m, err := filepath.Glob("../../conf/ramjet.example.*")
	if err != nil || len(m) != 1 {
		t.Fatalf("want exactly one conf/ramjet.example.* file, found %q (%v)", m, err)
	}
	abs, err := filepath.Abs(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		yaml  string
		lines []int // problem lines expected as "ramjet.yaml:N:"; nil = valid
	}{
		{"valid", "listen: 127.0.0.1:8080\ndefaults:\n  default_ttl: 30s\n  grace: 5s\nhosts:\n  - names: [\"a.test\"]\n    cache: false\n", nil},
		{"unknown top-level key", "listen: 127.0.0.1:8080\n\nno_such_key: 1\n", []int{3}},
		{"unknown nested key", "defaults:\n  default_ttl: 30s\n  defualt_ttl: 30s\n", []int{3}},
		{"bad duration", "defaults:\n  grace: 5s\n  default_ttl: banana\n", []int{3}},
		{"bad size", "cache:\n  size: lots\n", []int{2}},
		{"syntax error", "defaults:\n  default_ttl: 30s\n  grace: 5s: 6s\n", []int{3}},
		{"origin idle timeout of none", "origin:\n  servers: [\"http://127.0.0.1:8081\"]\n  idle_timeout: 0s\n", []int{3}},
		{"two problems", "cache:\n  size: 100\ndefaults:\n  default_ttl: 30s\norigin:\n  servers: [\"ftp://127.0.0.1:21\"]\n", []int{2, 6}},
		{"access logs", "access_log:\n  path: stdout\nhosts:\n  - names: [a.test]\n    access_log: off\n  - names: [b.test]\n    access_log: {path: /var/log/ramjet/b.log, format: json}\n", nil},
		{"unknown access log format", "access_log:\n  path: /var/log/ramjet/access.log\n  format: apache\n", []int{3}},
		{"unknown access log format of a host", "hosts:\n  - names: [a.test]\n    access_log:\n      format: nginx\n", []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := testbed.WriteConfig(t, "", tt.yaml)
			code, out := testbed.RunRamjet(t, 10*time.Second, "check", "--config", path)
			if tt.lines == nil {
				if code != 0 {
					t.Fatalf("exit %d for a valid file, want 0; output:\n%s", code, out)
				}
				return
			}
			if code == 0 {
				t.Fatalf("exit 0 for an invalid file; output:\n%s", out)
			}
			for _, line := range tt.lines {
				re := regexp.MustCompile(`(?m)(^|[\s/])ramjet\.yaml:` + fmt.Sprint(line) + `: \S`)
				if !re.MatchString(out) {
					t.Errorf("output has no \"ramjet.yaml:%d: message\" line:\n%s", line, out)
				}
			}
		})
	}
	t.Run("example config", func(t *testing.T) {
		if code, out := testbed.RunRamjet(t, 10*time.Second, "check", "--config", exampleConfig(t)); code != 0 {
			t.Errorf("exit %d for the documented example, want 0; output:\n%s", code, out)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope.yaml")
		code, out := testbed.RunRamjet(t, 10*time.Second, "check", "--config", missing)
		if code == 0 || !strings.Contains(out, "nope.yaml") {
			t.Errorf("exit %d, output %q: want non-zero naming the file", code, out)
		}
	})
}

func TestVersionCommand(t *testing.T) {
	t.Parallel()
	code, out := testbed.RunRamjet(t, 10*time.Second, "version")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("ramjet version: exit %d output %q, want 0 and a version", code, out)
	}
}

func TestAdminNonLoopbackWithoutTokenRefused(t *testing.T) {
	t.Parallel()
	ports := testbed.FreePorts(t, 2)
	listen := fmt.Sprintf("127.0.0.1:%d", ports[0])
	origin := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	tests := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"flag 0.0.0.0", func(t *testing.T) []string {
			return []string{"--admin", fmt.Sprintf("0.0.0.0:%d", testbed.FreePort(t))}
		}},
		{"flag without host", func(t *testing.T) []string {
			return []string{"--admin", fmt.Sprintf(":%d", testbed.FreePort(t))}
		}},
		{"flag [::]", func(t *testing.T) []string {
			return []string{"--admin", fmt.Sprintf("[::]:%d", testbed.FreePort(t))}
		}},
		{"config file", func(t *testing.T) []string {
			return []string{"--config", testbed.WriteConfig(t, "", fmt.Sprintf("admin:\n  listen: \"0.0.0.0:%d\"\n", testbed.FreePort(t)))}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--listen", listen, "--origin", origin}, tt.args(t)...)
			code, out := testbed.RunRamjet(t, 5*time.Second, args...)
			if code == 0 {
				t.Errorf("exit 0, want a refusal; output:\n%s", out)
			}
			if !strings.Contains(strings.ToLower(out), "token") {
				t.Errorf("output does not say a token is needed:\n%s", out)
			}
		})
	}
	t.Run("loopback with token starts", func(t *testing.T) {
		rj := startRamjet(t, origin, "--admin-token", "s3cret")
		if !rj.Alive() {
			t.Fatal("not running")
		}
	})
}

func TestMetricsExposed(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	u := rj.URL + "/e/metrics?" + hq("Cache-Control: max-age=60")
	mustMissStored(t, get(t, c, u), "GET")
	mustFreshHit(t, get(t, c, u), "GET")

	r := get(t, c, rj.AdminURL+"/metrics")
	mustStatus(t, r, http.StatusOK, "GET /metrics")
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want text/plain (Prometheus text format)", ct)
	}
	if !regexp.MustCompile(`(?m)^ramjet_requests_total(\{[^}]*\})? [0-9.e+]+$`).Match(r.Body) {
		t.Errorf("/metrics has no ramjet_requests_total sample:\n%.2000s", r.Body)
	}
	if h := get(t, c, rj.AdminURL+"/healthz"); h.Status != http.StatusOK {
		t.Errorf("/healthz status %d", h.Status)
	}
}

func TestSIGTERMDrainsInFlightRequest(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	type outcome struct {
		r   result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := tryDo(c, http.MethodGet, rj.URL+"/e/drain?mark=drain&sleep_ms=1500", nil)
		done <- outcome{r, err}
	}()
	if !testbed.Poll(5*time.Second, func() bool { return o.marked("drain") }) {
		t.Fatal("slow request never reached the origin")
	}
	start := time.Now()
	rj.Signal(t, syscall.SIGTERM)

	got := <-done
	if got.err != nil {
		t.Fatalf("in-flight request failed after SIGTERM: %v", got.err)
	}
	mustStatus(t, got.r, http.StatusOK, "in-flight request")
	if got.r.ID() == "" {
		t.Errorf("in-flight request body incomplete: %.200q", got.r.Body)
	}
	if code := rj.Wait(t, testbed.StopTimeout); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0", code)
	}
	t.Logf("exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	if _, err := newClient(t).Get(rj.URL + "/e/drain-after"); err == nil {
		t.Error("ramjet still accepts requests after exiting")
	}
}

// TestSIGTERMAnswersAConnectionThatHadSentNothingYet: a client that
// connected before ramjet began to stop (its connection parked for want
// of a request) and sends its request after ramjet closed its listening
// socket is answered, with Connection: close, rather than dropped: it
// connected to ramjet, and no client retries a request on a connection
// that never served one. On the main listener (its lane) and on the h2c
// one (its sorting of HTTP/2 from HTTP/1.1, proxy/handshake).
func TestSIGTERMAnswersAConnectionThatHadSentNothingYet(t *testing.T) {
	t.Parallel()
	t.Run("main", func(t *testing.T) {
		t.Parallel()
		_, rj, _ := setup(t, "")
		answersAfterSIGTERM(t, rj, strings.TrimPrefix(rj.URL, "http://"), "main")
	})
	t.Run("h2c", func(t *testing.T) {
		t.Parallel()
		addr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
		rj := startRamjet(t, cachedOrigin(t).URL, "--h2c-listen", addr)
		answersAfterSIGTERM(t, rj, addr, "h2c")
	})
}

// answersAfterSIGTERM connects to rj's listener at addr, waits until the
// connection is parked, stops rj, and sends a request once rj no longer
// listens: it must be answered, with Connection: close, and rj exit 0.
func answersAfterSIGTERM(t *testing.T, rj *testbed.Ramjet, addr, listener string) {
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	parked := `ramjet_client_connections_parked{listener="` + listener + `"}`
	if !testbed.Poll(5*time.Second, func() bool { return metricValue(t, rj.AdminURL, parked) >= 1 }) {
		t.Fatalf("%s: %v, want the silent connection", parked, metricValue(t, rj.AdminURL, parked))
	}
	rj.Signal(t, syscall.SIGTERM)
	if !testbed.Poll(10*time.Second, func() bool {
		probe, err := net.Dial("tcp", addr)
		if err == nil {
			probe.Close()
		}
		return err != nil
	}) {
		t.Fatal("ramjet still listens 10 s after SIGTERM")
	}
	_ = silent.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(silent, "GET /e/after HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r, err := http.ReadResponse(bufio.NewReader(silent), nil)
	if err != nil {
		t.Fatalf("a request on a connection made before SIGTERM: %v", err)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != http.StatusOK || !r.Close {
		t.Fatalf("answer %d, close %v, %q, %v; want 200 with Connection: close", r.StatusCode, r.Close, body, err)
	}
	if code := rj.Wait(t, testbed.StopTimeout); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0", code)
	}
}

func TestFlagsOverrideConfigFile(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := testbed.FreePorts(t, 3)
	cfg := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nadmin:\n  listen: \"127.0.0.1:%d\"\norigin:\n  servers: [\"http://127.0.0.1:%d\"]\n", p[0], p[1], p[2])
	// startRamjet passes --listen, --admin and --origin and waits for
	// /healthz on the flag's admin address.
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", cfg))
	c := newClient(t)
	r := get(t, c, rj.URL+"/e/flags")
	mustStatus(t, r, http.StatusOK, "GET through the --listen address to the --origin server")
	for _, port := range p[:2] {
		if _, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port)); err == nil {
			t.Errorf("something answers on the config file's port %d; the flag should have replaced it", port)
		}
	}
}

// TestReloadResizesThePrivateCache: a smaller cache.private_size on
// reload evicts the private cache down to it at once, as cache.size does
// for the shared one.
func TestReloadResizesThePrivateCache(t *testing.T) {
	t.Parallel()
	page := bytes.Repeat([]byte("p"), 200<<10)
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-LiteSpeed-Cache-Control", "private, max-age=600")
		w.Write(page)
	}))
	t.Cleanup(o.Close)
	dir := t.TempDir()
	path := testbed.WriteConfig(t, dir, "cache:\n  private_size: 16MiB\n")
	rj := startRamjet(t, o.URL, "--config", path)
	c := newClient(t)
	for i := range 20 { // 4 MiB of one user's private pages
		r := get(t, c, fmt.Sprintf("%s/private/%d", rj.URL, i), "Cookie: session=alice")
		mustStatus(t, r, http.StatusOK, "private page")
	}
	if b := metricValue(t, rj.AdminURL, "ramjet_private_cache_bytes"); b < 3<<20 {
		t.Fatalf("ramjet_private_cache_bytes %.0f after 4 MiB of private pages, want at least 3 MiB stored", b)
	}
	testbed.WriteConfig(t, dir, "cache:\n  private_size: 1MiB\n")
	rj.Signal(t, syscall.SIGHUP)
	var b float64
	if !testbed.Poll(10*time.Second, func() bool {
		b = metricValue(t, rj.AdminURL, "ramjet_private_cache_bytes")
		return b <= 1<<20
	}) {
		t.Errorf("ramjet_private_cache_bytes %.0f after a reload to private_size: 1MiB", b)
	}
}
