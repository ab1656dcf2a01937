package main_test

// End-to-end tests of what the transport tells a request (issue 28,
// "one protocol view"): the WAF sees an HTTP/3 request as HTTP/3, and
// 103 Early Hints reach HTTP/3 clients as an interim HEADERS frame.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// A site rule on REQUEST_PROTOCOL blocks a path over HTTP/3 only: the
// same request over HTTP/1.1 and HTTP/2 passes, another path over HTTP/3
// passes (the CRS allows HTTP/3.0), and the access log shows the blocked
// one as HTTP/3.0 with the rule. Before, the WAF saw an HTTP/3 request as
// HTTP/1.1 and the rule never matched.
func TestWAFSeesHTTP3RequestsAsHTTP3(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "site.conf")
	rule := `SecRule REQUEST_PROTOCOL "@streq HTTP/3.0" "id:1005,phase:1,deny,log,msg:'HTTP/3 probe',chain"` + "\n" +
		`SecRule REQUEST_FILENAME "@streq /e/h3-probe" ""` + "\n"
	if err := os.WriteFile(rules, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "access.log")
	yaml := fmt.Sprintf("access_log:\n  path: %q\n  format: ramjet\ndefaults:\n  waf:\n    mode: block\n    rules: [%q]\n", log, rules)
	rj := startH3Ramjet(t, newPKI(t), o.URL, "--config", testbed.WriteConfig(t, "", yaml))
	clients := []struct {
		name string
		c    *http.Client
	}{{"h1", rj.client(t, "h1")}, {"h2", rj.client(t, "h2")}, {"h3", rj.h3Client(t, nil)}}
	for _, cl := range clients {
		want := http.StatusOK
		if cl.name == "h3" {
			want = http.StatusForbidden
		}
		// A query of its own per client: a miss each, which the WAF inspects.
		mustStatus(t, get(t, cl.c, rj.HTTPS("localhost", "/e/h3-probe?via="+cl.name)), want, "the probe over "+cl.name)
	}
	mustStatus(t, get(t, clients[2].c, rj.HTTPS("localhost", "/e/h3-other")), http.StatusOK, "another path over h3")
	lines := waitLines(t, log, 4)
	blocked := ""
	for _, l := range lines {
		if strings.Contains(l, "/e/h3-probe?via=h3") {
			blocked = l
		}
	}
	if !strings.Contains(blocked, `"GET /e/h3-probe?via=h3 HTTP/3.0" 403 `) || !strings.Contains(blocked, "waf=blocked") || !strings.Contains(blocked, "1005") {
		t.Errorf("access log line of the h3 probe %q: want HTTP/3.0, 403 and waf=blocked by rule 1005; all lines:\n%s", blocked, strings.Join(lines, "\n"))
	}
}

// Over HTTP/3 the origin's 103 goes on as an interim HEADERS frame
// (QPACK, :status 103) before the answer's; the hit that follows has
// none. Before, the HTTP/1.1 code ran for HTTP/3 requests and its write
// to the stream's stand-in connection failed: no hint arrived.
func TestEarlyHintsReachHTTP3Clients(t *testing.T) {
	t.Parallel()
	o := startHintsOrigin(t)
	rj := startH3Ramjet(t, newPKI(t), o.URL())
	c := rj.h3Client(t, nil)
	url := rj.HTTPS("localhost", "/h3page")
	hints, first := hintedGet(t, c, url, "the miss", 3)
	if want := "103 " + hintLink; len(hints) != 1 || hints[0] != want {
		t.Fatalf("the miss: interim responses %q, want [%q]", hints, want)
	}
	hints, body := hintedGet(t, c, url, "the hit", 3)
	if len(hints) != 0 || body != first {
		t.Fatalf("the hit: interim responses %q, body %q; want none and the stored %q", hints, body, first)
	}
	if n := o.requests.Load(); n != 1 {
		t.Fatalf("origin answered %d requests, want 1", n)
	}
}
