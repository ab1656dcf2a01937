package main_test

// End-to-end tests of config reloads that fail (issue 13, item 4): a
// reload builds everything, certificates included, before it swaps
// anything, so one that fails anywhere leaves the old config and the old
// certificates serving.

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// reloadYAML is a config serving cert as the default certificate with an
// HSTS max-age (the proxy setting the test watches) and extra appended.
func reloadYAML(maxAge int, cert, key, extra string) string {
	return fmt.Sprintf("defaults:\n  hsts: \"max-age=%d\"\ntls:\n  cert: %s\n  key: %s\n%s", maxAge, cert, key, extra)
}

// reloadCount reads ramjet_reloads_total{result=…} from /metrics.
func reloadCount(t *testing.T, rj *tlsRamjet, result string) int {
	t.Helper()
	r := get(t, newClient(t), rj.AdminURL+"/metrics")
	mustStatus(t, r, 200, "GET /metrics")
	prefix := `ramjet_reloads_total{result="` + result + `"} `
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s%q: %v", prefix, v, err)
			}
			return n
		}
	}
	return 0
}

// waitReloads waits until n reloads ended with result.
func waitReloads(t *testing.T, rj *tlsRamjet, result string, n int) {
	t.Helper()
	if !testbed.Poll(10*time.Second, func() bool { return reloadCount(t, rj, result) >= n }) {
		t.Fatalf("ramjet_reloads_total{result=%q} did not reach %d within 10 s:\n%s", result, n, rj.Output())
	}
}

// mustServe checks the HSTS max-age of a TLS answer (the proxy's config
// generation) and the certificate of a new handshake.
func mustServe(t *testing.T, rj *tlsRamjet, maxAge int, leaf *x509.Certificate, what string) {
	t.Helper()
	r := get(t, rj.client(t, "h1"), rj.HTTPS("localhost", "/static/page725.html"))
	mustStatus(t, r, 200, what)
	if got, want := r.Header.Get("Strict-Transport-Security"), fmt.Sprintf("max-age=%d", maxAge); got != want {
		t.Errorf("%s: Strict-Transport-Security %q, want %q", what, got, want)
	}
	if got := peerCert(t, rj, "localhost"); !got.Equal(leaf) {
		t.Errorf("%s: served the certificate with serial %v, want %v", what, got.SerialNumber, leaf.SerialNumber)
	}
}

func TestFailedReloadKeepsConfigAndCertificates(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := newPKI(t)
	a := p.ca.Issue(t, "", "localhost", "127.0.0.1")
	aCert, aKey := a.Write(t, p.dir, "a")
	b := p.ca.Issue(t, "", "localhost", "127.0.0.1")
	bCert, bKey := b.Write(t, p.dir, "b")
	garbage, garbageKey := p.dir+"/garbage.crt", p.dir+"/garbage.key"
	for _, f := range []string{garbage, garbageKey} {
		if err := os.WriteFile(f, []byte("not PEM"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfgDir := t.TempDir()
	path := testbed.WriteConfig(t, cfgDir, reloadYAML(100, aCert, aKey, ""))
	addr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	_, port, _ := net.SplitHostPort(addr)
	// No --tls-cert: flags override the file, and the test changes tls.cert.
	rj := &tlsRamjet{Ramjet: startRamjet(t, o.URL, "--config", path, "--tls-listen", addr), TLSAddr: addr, Port: port, pki: p}
	mustServe(t, rj, 100, a.Cert, "at start")

	// failsInProxy builds a docroot pool whose php-cgi does not exist:
	// the certificates load, proxy.Reload fails.
	failsInProxy := fmt.Sprintf("hosts:\n  - names: [php.test]\n    docroot:\n      root: %s\n      php:\n        binary: /nonexistent/php-cgi\n", t.TempDir())
	bad := []struct {
		name, yaml string
		before     func(t *testing.T)
	}{
		{"new certificate path that does not load", reloadYAML(200, garbage, garbageKey, ""), nil},
		{"new certificate loads, the proxy generation fails", reloadYAML(200, bCert, bKey, failsInProxy), nil},
		{"same certificate path, its files no longer load", reloadYAML(200, aCert, aKey, ""), func(t *testing.T) {
			// The store's own watcher sees this too and keeps a's entry.
			for _, f := range []string{aCert, aKey} {
				if err := os.WriteFile(f, []byte("not PEM"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for i, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before(t)
			}
			offset := len(rj.Output())
			testbed.WriteConfig(t, cfgDir, tt.yaml)
			waitReloads(t, rj, "error", i+1)
			if out := rj.Output()[offset:]; !strings.Contains(out, "reload failed; keeping the running config") {
				t.Errorf("no failed-reload log line:\n%s", out)
			}
			mustServe(t, rj, 100, a.Cert, "after the failed reload")
		})
	}
	if t.Failed() {
		return
	}

	testbed.WriteConfig(t, cfgDir, reloadYAML(200, bCert, bKey, ""))
	waitReloads(t, rj, "ok", 1)
	mustServe(t, rj, 200, b.Cert, "after a good reload")
	if n := reloadCount(t, rj, "error"); n != len(bad) {
		t.Errorf("%d failed reloads, want %d", n, len(bad))
	}
}
