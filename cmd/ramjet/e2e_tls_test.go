package main_test

// End-to-end tests of TLS termination and HTTP/2 (issue 7) through the
// built binary: a CA made here, certificates chosen by SNI and rotated
// live, HTTP/1.1 and HTTP/2 clients sharing one cache, purges and PHP over
// h2, HTTPS redirect and HSTS, a graceful SIGTERM with an open h2
// connection, curl and h2load.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/certs/certtest"
)

// pki is a test CA and the default certificate it issued, on disk.
type pki struct {
	ca        *certtest.CA
	dir       string
	caFile    string // the CA in PEM, for curl
	cert, key string // default pair: localhost and 127.0.0.1
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	p := &pki{ca: certtest.NewCA(t, "ramjet e2e CA"), dir: t.TempDir()}
	p.cert, p.key = p.ca.Issue(t, "", "localhost", "127.0.0.1").Write(t, p.dir, "default")
	p.caFile = filepath.Join(p.dir, "ca.pem")
	if err := os.WriteFile(p.caFile, p.ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// issue writes a leaf for names as dir/name.crt and .key.
func (p *pki) issue(t testing.TB, file string, names ...string) (certFile, keyFile string) {
	t.Helper()
	return p.ca.Issue(t, "", names...).Write(t, p.dir, file)
}

// tlsRamjet is a ramjet with a TLS listener.
type tlsRamjet struct {
	*testbed.Ramjet
	TLSAddr string // 127.0.0.1:port
	Port    string
	pki     *pki
}

// startTLSRamjet runs ramjet with --tls-listen on a free port and the
// default certificate of p; args follow.
func startTLSRamjet(t testing.TB, p *pki, originURL string, args ...string) *tlsRamjet {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	argv := append([]string{"--tls-listen", addr, "--tls-cert", p.cert, "--tls-key", p.key}, args...)
	rj := startRamjet(t, originURL, argv...)
	_, port, _ := net.SplitHostPort(addr)
	return &tlsRamjet{Ramjet: rj, TLSAddr: addr, Port: port, pki: p}
}

// HTTPS is https://host:port/path on the TLS listener.
func (r *tlsRamjet) HTTPS(host, path string) string { return "https://" + host + ":" + r.Port + path }

// client speaks HTTP/2 ("h2") or HTTP/1.1 ("h1") over TLS to the TLS
// listener whatever host the URL names, verifying against the test CA
// with the URL's host as server name.
func (r *tlsRamjet) client(t testing.TB, proto string) *http.Client {
	t.Helper()
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if proto == "h2" {
		tr := &http2.Transport{
			TLSClientConfig: &tls.Config{RootCAs: r.pki.ca.Pool()},
			DialTLSContext: func(ctx context.Context, _, _ string, cfg *tls.Config) (net.Conn, error) {
				d := tls.Dialer{Config: cfg}
				return d.DialContext(ctx, "tcp", r.TLSAddr)
			},
		}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: noRedirect}
	}
	tr := &http.Transport{
		TLSClientConfig:    &tls.Config{RootCAs: r.pki.ca.Pool(), NextProtos: []string{"http/1.1"}},
		TLSNextProto:       map[string]func(string, *tls.Conn) http.RoundTripper{}, // no h2
		DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", r.TLSAddr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: noRedirect}
}

// protoGet is get that also checks the HTTP version of the answer.
func protoGet(t testing.TB, c *http.Client, wantMajor int, url string, hdr ...string) result {
	t.Helper()
	req, err := newRequest(http.MethodGet, url, nil, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != wantMajor {
		t.Fatalf("GET %s answered over %s, want HTTP/%d", url, resp.Proto, wantMajor)
	}
	return get(t, c, url, hdr...) // once more for the body: the caller counts on cached pages only
}

// peerCert completes a handshake asking for serverName and returns the
// leaf the server presented. It does not verify it (the default
// certificate is presented for names it does not cover); curl and the
// HTTP clients here verify.
func peerCert(t testing.TB, r *tlsRamjet, serverName string) *x509.Certificate {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", r.TLSAddr,
		&tls.Config{ServerName: serverName, InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("handshake for %q: %v", serverName, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func runCurl(t testing.TB, args ...string) string {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("curl not found (%v): the TLS tests need it; .ci/deps installs it (apt-get install curl)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, curl, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestTLSCurlHTTP2AndSNIPicksTheCertificate(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := newPKI(t)
	shopCert, shopKey := p.issue(t, "shop", "shop.test", "*.shop.test")
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("tls:\n  hosts:\n    - names: [shop.test, \"*.shop.test\"]\n      cert: %s\n      key: %s\n", shopCert, shopKey))
	rj := startTLSRamjet(t, p, o.URL, "--config", cfg)

	for _, tt := range []struct{ serverName, wantCN string }{
		{"shop.test", "shop.test"},
		{"www.shop.test", "shop.test"},
		{"localhost", "localhost"},
		{"other.test", "localhost"}, // no match: the default certificate
	} {
		leaf := peerCert(t, rj, tt.serverName) // verified for localhost only where it is served
		if leaf.Subject.CommonName != tt.wantCN {
			t.Errorf("SNI %q: got the certificate of %q, want %q", tt.serverName, leaf.Subject.CommonName, tt.wantCN)
		}
	}

	u := "/e/tls-curl?" + hq("Cache-Control: max-age=60")
	for _, tt := range []struct{ name, flag, host, status, cacheStatus string }{
		{"h2 by ALPN, default certificate", "--http2", "localhost", "HTTP/2 200", "fwd=miss; stored"},
		{"http/1.1 over TLS shares the entry", "--http1.1", "localhost", "HTTP/1.1 200", "ramjet; hit"},
		{"h2 to a SNI host verifies its certificate", "--http2", "www.shop.test", "HTTP/2 200", "fwd=miss; stored"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := runCurl(t, "-sS", "-D", "-", tt.flag, "--cacert", p.caFile,
				"--resolve", tt.host+":"+rj.Port+":127.0.0.1", rj.HTTPS(tt.host, u))
			if !strings.HasPrefix(out, tt.status) || !strings.Contains(strings.ToLower(out), "cache-status: ramjet; "+strings.TrimPrefix(tt.cacheStatus, "ramjet; ")) {
				t.Fatalf("curl %s: want %q and Cache-Status %q:\n%s", tt.flag, tt.status, tt.cacheStatus, out)
			}
			if !strings.Contains(out, "hdr.X-Forwarded-Proto: https") {
				t.Fatalf("origin did not see X-Forwarded-Proto: https:\n%s", out)
			}
		})
	}
}

func TestTLSCertificateRotationPickedUpLive(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := newPKI(t)
	cfgDir := t.TempDir()
	cfg := testbed.WriteConfig(t, cfgDir, "log:\n  level: info\n")
	rj := startTLSRamjet(t, p, o.URL, "--config", cfg)
	before := peerCert(t, rj, "localhost").SerialNumber

	// The cert tool rewrites the default pair in place (by rename).
	p.ca.Issue(t, "", "localhost", "127.0.0.1").Write(t, p.dir, "default")
	if !testbed.Poll(5*time.Second, func() bool { return peerCert(t, rj, "localhost").SerialNumber.Cmp(before) != 0 }) {
		t.Fatalf("still serving serial %v 5 s after the files changed", before)
	}

	// A broken rewrite keeps the last good certificate.
	// The watcher's reload of the broken file is the event: ramjet logs
	// that it keeps the old certificate (the rotation above showed that
	// reloads are seen), and only then is the serial compared.
	current := peerCert(t, rj, "localhost").SerialNumber
	logged := len(rj.Output())
	if err := os.WriteFile(p.cert, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	rj.WaitOutput(t, logged, "keeping the old certificate", 5*time.Second)
	if got := peerCert(t, rj, "localhost").SerialNumber; got.Cmp(current) != 0 {
		t.Fatalf("serial %v after a bad file, want the old %v", got, current)
	}

	// Good files again: picked up by the watcher or the SIGHUP, whichever
	// comes first.
	p.ca.Issue(t, "", "localhost", "127.0.0.1").Write(t, p.dir, "default")
	rj.Signal(t, syscall.SIGHUP)
	if !testbed.Poll(5*time.Second, func() bool { return peerCert(t, rj, "localhost").SerialNumber.Cmp(current) != 0 }) {
		t.Fatal("default certificate not replaced after good files and SIGHUP")
	}

	// A host added to the config gets its certificate on reload.
	blogCert, blogKey := p.issue(t, "blog", "blog.test")
	testbed.WriteConfig(t, cfgDir, fmt.Sprintf("tls:\n  hosts:\n    - names: [blog.test]\n      cert: %s\n      key: %s\n", blogCert, blogKey))
	if !testbed.Poll(5*time.Second, func() bool { return peerCert(t, rj, "blog.test").Subject.CommonName == "blog.test" }) {
		t.Fatalf("blog.test not served its own certificate after the config reload:\n%s", rj.Output())
	}
	if !strings.Contains(rj.Output(), "certificates reloaded with new settings") {
		t.Errorf("no log line for the new certificate settings:\n%s", rj.Output())
	}
}

func TestTLSH1AndH2ShareTheCache(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), o.URL)
	h1, h2c, plain := rj.client(t, "h1"), rj.client(t, "h2"), newClient(t)

	tests := []struct {
		name, path, accept string
		first, then        string // client protocols
	}{
		{"h2 fills, h1 hits", "/e/tls-share-a?" + hq("Cache-Control: max-age=60"), "", "h2", "h1"},
		{"h1 fills, h2 hits", "/e/tls-share-b?" + hq("Cache-Control: max-age=60"), "", "h1", "h2"},
		{"30 KB gzipped the same way", "/e/tls-share-c?size=30000&" + hq("Cache-Control: max-age=60"), "gzip", "h2", "h1"},
	}
	clients := map[string]*http.Client{"h1": h1, "h2": h2c}
	major := map[string]int{"h1": 1, "h2": 2}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.HTTPS("localhost", tt.path)
			var hdr []string
			if tt.accept != "" {
				hdr = []string{"Accept-Encoding: " + tt.accept}
			}
			first := get(t, clients[tt.first], u, hdr...)
			mustMissStored(t, first, tt.first+" first")
			a := protoGet(t, clients[tt.then], major[tt.then], u, hdr...)
			b := protoGet(t, clients[tt.first], major[tt.first], u, hdr...)
			mustFreshHit(t, a, tt.then+" after "+tt.first)
			mustFreshHit(t, b, tt.first+" again")
			if string(a.Body) != string(b.Body) || string(a.Body) != string(first.Body) && tt.accept == "" {
				t.Fatalf("bodies differ between protocols:\n%.200q\n%.200q", a.Body, b.Body)
			}
			for _, h := range []string{"Cache-Status", "Content-Type", "Content-Encoding", "ETag", "Content-Length"} {
				if a.Header.Get(h) != b.Header.Get(h) {
					t.Errorf("%s: %q over %s, %q over %s", h, a.Header.Get(h), tt.then, b.Header.Get(h), tt.first)
				}
			}
			if tt.accept != "" && a.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("Content-Encoding %q, want gzip", a.Header.Get("Content-Encoding"))
			}
			if got := parseEcho(decodeBody(t, first))["hdr.x-forwarded-proto"]; got != "https" {
				t.Errorf("origin saw X-Forwarded-Proto %q, want https", got)
			}
			if n := o.waitRequests(t, strings.SplitN(tt.path, "?", 2)[0], 1); n != 1 {
				t.Errorf("origin saw %d requests, want 1", n)
			}
		})
	}
	// Plain HTTP is another scheme, so another entry, and says so upstream.
	r := get(t, plain, rj.URL+"/e/tls-share-a?"+hq("Cache-Control: max-age=60"))
	mustMissStored(t, r, "plain HTTP")
	if got := r.Echo()["hdr.x-forwarded-proto"]; got != "http" {
		t.Errorf("plain request: origin saw X-Forwarded-Proto %q, want http", got)
	}
}

func TestTLSPurgeOverH2(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), o.URL)
	c := rj.client(t, "h2")
	u := rj.HTTPS("localhost", "/e/tls-purge?"+hq("Cache-Control: max-age=60", "X-LiteSpeed-Tag: tls-tag"))
	fill := func(what string) string {
		t.Helper()
		r := get(t, c, u)
		mustMissStored(t, r, what)
		mustFreshHit(t, get(t, c, u), what+", then")
		return r.ID()
	}
	id := fill("first fill")

	r := do(t, c, "PURGE", u)
	mustStatus(t, r, http.StatusOK, "PURGE over h2")
	if !strings.Contains(string(r.Body), `"purged"`) {
		t.Fatalf("PURGE answer %q", r.Body)
	}
	id2 := fill("after PURGE")
	if id2 == id {
		t.Fatal("PURGE over h2 left the entry")
	}

	mustStatus(t, adminPost(t, newClient(t), rj.Ramjet, "tag=tls-tag", "", ""), http.StatusOK, "tag purge")
	if id3 := fill("after the tag purge"); id3 == id2 {
		t.Fatal("tag purge left the entry served over h2")
	}

	// A purge header on a response to an h2 POST applies too.
	post := rj.HTTPS("localhost", "/e/tls-purge-post?"+hq("X-LiteSpeed-Purge: tag=tls-tag"))
	mustStatus(t, do(t, c, http.MethodPost, post), http.StatusOK, "POST with a purge header")
	if r := get(t, c, u); r.CacheStatus().Hit {
		t.Fatalf("served %q after a purge header over h2", r.Header.Get("Cache-Status"))
	}
	if n := o.waitRequests(t, "/e/tls-purge", 4); n != 4 {
		t.Errorf("origin saw %d fills, want 4", n)
	}
}

func TestTLSPHPDocrootOverH2(t *testing.T) {
	t.Parallel()
	root := phpDocroot(t)
	rj := startTLSRamjet(t, newPKI(t), "", "--config", phpConfig(t, root, ""))
	h2c, h1 := rj.client(t, "h2"), rj.client(t, "h1")

	r := protoGet(t, h2c, 2, rj.HTTPS("localhost", "/hello.php"))
	mustStatus(t, r, http.StatusOK, "hello.php over h2")
	if string(r.Body) != "Hello, World!" {
		t.Fatalf("hello.php body %q", r.Body)
	}
	env := string(get(t, h2c, rj.HTTPS("localhost", "/env.php")).Body)
	if !strings.Contains(env, "https: on\n") || !strings.Contains(env, "server_port: "+rj.Port+"\n") {
		t.Fatalf("PHP over h2 does not see HTTPS on port %s:\n%s", rj.Port, env)
	}

	u := rj.HTTPS("localhost", "/cached.php?id=7")
	first := get(t, h2c, u)
	mustMissStored(t, first, "cached.php over h2")
	hit := protoGet(t, h1, 1, u)
	mustFreshHit(t, hit, "cached.php over HTTP/1.1 after h2")
	if string(hit.Body) != string(first.Body) {
		t.Fatalf("h1 hit %q, h2 fill %q", hit.Body, first.Body)
	}

	// A script's POST body streams through the h2 bridge.
	r, err := tryDo(h2c, http.MethodPost, rj.HTTPS("localhost", "/form.php"), strings.NewReader("name=h2&lang=go"),
		"Content-Type: application/x-www-form-urlencoded")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, http.StatusOK, "form POST over h2")
	if !strings.Contains(string(r.Body), "post.name: h2") {
		t.Fatalf("form POST over h2:\n%s", r.Body)
	}
}

func TestTLSHTTPSRedirectAndHSTS(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, "", "defaults:\n  https_redirect: true\n  hsts: \"max-age=600; includeSubDomains\"\n"+
		"hosts:\n  - names: [plain.test]\n    https_redirect: false\n    hsts: \"\"\n")
	rj := startTLSRamjet(t, newPKI(t), o.URL, "--config", cfg)
	plain, h2c := newClient(t), rj.client(t, "h2")

	r := get(t, plain, rj.URL+"/e/tls-redirect?x=1&y=2")
	mustStatus(t, r, http.StatusMovedPermanently, "plain GET")
	want := "https://127.0.0.1:" + rj.Port + "/e/tls-redirect?x=1&y=2"
	if loc := r.Header.Get("Location"); loc != want {
		t.Fatalf("Location %q, want %q", loc, want)
	}
	if h := r.Header.Get("Strict-Transport-Security"); h != "" {
		t.Fatalf("HSTS %q on plain HTTP", h)
	}
	if n := o.loggedRequests(t, "/e/tls-redirect"); n != 0 {
		t.Fatalf("the origin saw %d redirected requests", n)
	}
	mustStatus(t, do(t, plain, http.MethodPost, rj.URL+"/e/tls-redirect"), http.StatusPermanentRedirect, "plain POST")
	// ACME http-01 challenges must stay reachable over HTTP.
	mustStatus(t, get(t, plain, rj.URL+"/.well-known/acme-challenge/token"), http.StatusNotFound, "ACME challenge from the origin")
	// A host that opts out.
	mustStatus(t, get(t, plain, rj.URL+"/static/page725.html", "Host: plain.test"), http.StatusOK, "opted-out host")

	// Following the redirect over h2 (the certificate covers 127.0.0.1).
	for _, what := range []string{"miss", "hit"} {
		r = protoGet(t, h2c, 2, want+"&"+hq("Cache-Control: max-age=60"))
		mustStatus(t, r, http.StatusOK, "h2 "+what)
		if h := r.Header.Get("Strict-Transport-Security"); h != "max-age=600; includeSubDomains" {
			t.Fatalf("h2 %s: Strict-Transport-Security %q", what, h)
		}
	}
	if h := get(t, h2c, rj.HTTPS("127.0.0.1", "/static/page725.html"), "Host: plain.test").Header.Get("Strict-Transport-Security"); h != "" {
		t.Fatalf("HSTS %q for a host without hsts", h)
	}
}

func TestTLSGracefulSIGTERMWithOpenH2Connection(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), o.URL)
	c := rj.client(t, "h2")
	mustStatus(t, get(t, c, rj.HTTPS("localhost", "/static/page725.html")), http.StatusOK, "warm-up on the connection")

	type answer struct {
		r   result
		err error
	}
	slow := make(chan answer, 1)
	go func() {
		r, err := tryDo(c, http.MethodGet, rj.HTTPS("localhost", "/e/tls-drain?sleep_ms=1500&mark=tls-drain"), nil)
		slow <- answer{r, err}
	}()
	if !testbed.Poll(5*time.Second, func() bool { return o.marked("tls-drain") }) {
		t.Fatal("the slow request never reached the origin")
	}
	rj.Signal(t, syscall.SIGTERM)

	// New connections are refused while the stream in flight finishes.
	if !testbed.Poll(2*time.Second, func() bool {
		conn, err := net.DialTimeout("tcp", rj.TLSAddr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
		}
		return err != nil
	}) {
		t.Error("TLS listener still accepting after SIGTERM")
	}
	a := <-slow
	if a.err != nil {
		t.Fatalf("in-flight h2 request cut by the drain: %v", a.err)
	}
	mustStatus(t, a.r, http.StatusOK, "in-flight h2 request")
	if a.r.Echo()["uri"] == "" {
		t.Fatalf("in-flight answer incomplete: %q", a.r.Body)
	}
	if code := rj.Wait(t, testbed.StopTimeout); code != 0 {
		t.Fatalf("ramjet exited %d after SIGTERM, want 0:\n%s", code, rj.Output())
	}
	if !strings.Contains(rj.Output(), "ramjet stopped") {
		t.Fatalf("no orderly stop in the log:\n%s", rj.Output())
	}
}

var (
	h2loadDone = regexp.MustCompile(`requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed`)
	h2loadRate = regexp.MustCompile(`finished in [^,]+, ([\d.]+) req/s`)
)

// h2load (nghttp2-client) over h2 and HTTP/1.1 against a cached page:
// every request succeeds; the rates are logged with -v.
func TestTLSH2load(t *testing.T) {
	h2load, err := exec.LookPath("h2load")
	if err != nil {
		t.Fatalf("h2load not found (%v): .ci/deps installs it (apt-get install nghttp2-client)", err)
	}
	t.Parallel()
	o := startOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), o.URL)
	u := rj.HTTPS("127.0.0.1", "/static/page725.html")
	before := o.loggedRequests(t, "/static/page725.html") // the origin's readiness checks
	mustStatus(t, get(t, rj.client(t, "h2"), u), http.StatusOK, "warm-up")
	for _, proto := range []string{"h2", "h1"} {
		t.Run(proto, func(t *testing.T) {
			args := []string{"-n", "5000", "-c", "10", "-m", "10", u}
			if proto == "h1" {
				args = append([]string{"--h1"}, args...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, h2load, args...).CombinedOutput()
			m := h2loadDone.FindStringSubmatch(string(out))
			if err != nil || m == nil || m[1] != m[2] || m[3] != "0" {
				t.Fatalf("h2load %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			if r := h2loadRate.FindStringSubmatch(string(out)); r != nil {
				t.Logf("h2load %s -n5000 -c10 -m10, cached 725 B: %s req/s", proto, r[1])
			}
		})
	}
	if n := o.waitRequests(t, "/static/page725.html", before+1) - before; n != 1 {
		t.Errorf("origin saw %d requests for the cached page, want 1", n)
	}
}

func TestTLSESIOverH2AndH1(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), o.URL)
	u := rj.HTTPS("localhost", esiPage("", []string{
		incl("/esi/pub.php?name=a"),
		incl("/esi/priv.php?name=p", `cache-control="private,no-vary"`),
	}))
	clients := []struct {
		proto, cookie, user string
		major               int
	}{{"h2", alice, "alice", 2}, {"h1", bob, "bob", 1}, {"h2", bob, "bob", 2}, {"h1", alice, "alice", 1}}
	var pageID, pubID string
	priv := map[string]string{}
	for i, cl := range clients {
		what := fmt.Sprintf("request %d (%s over %s)", i+1, cl.user, cl.proto)
		r := protoGet(t, rj.client(t, cl.proto), cl.major, u, cl.cookie)
		mustIntactPage(t, r, 2, what)
		mustNoMarkup(t, r, what)
		a, p := mustFrag(t, r, "a", what), mustFrag(t, r, "p", what)
		if i == 0 {
			pageID, pubID = r.ID(), a.ID
		}
		mustPageHit(t, r, pageID, what)
		if a.ID != pubID {
			t.Fatalf("%s: public fragment %s, want the shared %s", what, a.ID, pubID)
		}
		if p.User != cl.user {
			t.Fatalf("%s: private block of %q", what, p.User)
		}
		if old, ok := priv[cl.user]; ok && old != p.ID {
			t.Fatalf("%s: private block %s, want %s's cached %s", what, p.ID, cl.user, old)
		}
		priv[cl.user] = p.ID
	}
}
