package main_test

// End-to-end tests of the WAF (issue 16) through the built binary: the
// OWASP CRS v4 in front of the nginx + php-fpm origin, in block and in
// detect mode, on cache misses and not on hits, with allow networks
// judged on the client stage's address, body limits, rule files that
// must compile, and HTTP/2.

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// attack is one request the CRS must stop at paranoia 1.
type attack struct {
	name   string
	method string
	target string // path and query under /e/NS/
	ctype  string
	body   func() (string, []byte) // content type and body, for POSTs
	hdr    []string
}

func form(v string) func() (string, []byte) {
	return func() (string, []byte) { return "application/x-www-form-urlencoded", []byte(v) }
}

func jsonBody(v string) func() (string, []byte) {
	return func() (string, []byte) { return "application/json", []byte(v) }
}

// webShellUpload is a multipart upload of a PHP web shell.
func webShellUpload() (string, []byte) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.WriteField("title", "holiday")
	f, _ := w.CreateFormFile("file", "shell.php")
	_, _ = f.Write([]byte("<?php @eval($_POST['cmd']); system($_GET['c']); ?>\n"))
	_ = w.Close()
	return w.FormDataContentType(), b.Bytes()
}

var attacks = []attack{
	{name: "sql injection in the query", target: "sqli-q?id=1%27+OR+%271%27%3D%271"},
	{name: "sql injection in a form body", method: "POST", target: "sqli-form", body: form("user=x&id=1+UNION+SELECT+username,password+FROM+users--")},
	{name: "sql injection in a json body", method: "POST", target: "sqli-json", body: jsonBody(`{"order":{"id":"1' OR '1'='1"}}`)},
	{name: "xss", target: "xss?q=%3Cscript%3Ealert(document.cookie)%3C%2Fscript%3E"},
	{name: "path traversal", target: "lfi?file=..%2F..%2F..%2F..%2Fetc%2Fpasswd"},
	{name: "remote command execution", target: "rce?host=127.0.0.1%3Bcat+%2Fetc%2Fpasswd"},
	{name: "php injection", target: "php?code=%3C%3Fphp+system(%24_GET%5Bc%5D)%3B+%3F%3E"},
	{name: "scanner user agent", target: "scanner", hdr: []string{"User-Agent: sqlmap/1.7.2#stable (https://sqlmap.org)"}},
	{name: "web shell upload", method: "POST", target: "upload", body: webShellUpload},
}

// send sends a, under base with path prefix ns, from c.
func (a attack) send(t testing.TB, c *http.Client, base, ns string) result {
	t.Helper()
	method, body := cmpOr(a.method, "GET"), io.Reader(nil)
	hdr := a.hdr
	if a.body != nil {
		ctype, b := a.body()
		body, hdr = bytes.NewReader(b), append([]string{"Content-Type: " + ctype}, hdr...)
	}
	r, err := tryDo(c, method, base+"/e/"+ns+"/"+a.target, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (a attack) path(ns string) string {
	p, _, _ := strings.Cut("/e/"+ns+"/"+a.target, "?")
	return p
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// wafConfig is a config with the WAF on for every site, extra appended.
// startWAF runs the origin and ramjet with the WAF in mode for every
// site, logging in the ramjet format to the returned file.
func startWAF(t *testing.T, mode string) (*origin, *testbed.Ramjet, string) {
	t.Helper()
	o := startOrigin(t)
	log := filepath.Join(t.TempDir(), "access.log")
	yaml := fmt.Sprintf("access_log:\n  path: %q\n  format: ramjet\ndefaults:\n  waf:\n    mode: %s\n", log, mode)
	return o, startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", yaml)), log
}

func TestWAFBlocksAttacksAtParanoiaOne(t *testing.T) {
	t.Parallel()
	o, rj, log := startWAF(t, "block")
	c, ns := newClient(t), nsFor(t)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := a.send(t, c, rj.URL, ns)
			if r.Status != http.StatusForbidden || !bytes.Contains(r.Body, []byte("blocked by the site's firewall")) {
				t.Errorf("status %d, body %.200q; want 403 with the block page", r.Status, r.Body)
			}
			if n := o.waitRequests(t, a.path(ns), 0); n != 0 {
				t.Errorf("the origin saw %d requests for %s", n, a.path(ns))
			}
		})
	}
	t.Run("a benign search and a form post reach the origin whole", func(t *testing.T) {
		r := get(t, c, rj.URL+"/e/"+ns+"/search?s=hello+world&p=2")
		mustStatus(t, r, http.StatusOK, "benign GET")
		body := []byte("name=Jane&comment=" + url.QueryEscape("It's a lovely day, isn't it? \"Quoted\" too.") + "&pad=" + strings.Repeat("x", 2000))
		r, err := tryDo(c, "POST", rj.URL+"/e/"+ns+"/form", bytes.NewReader(body), "Content-Type: application/x-www-form-urlencoded")
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, r, http.StatusOK, "benign POST")
		if got := r.Echo()["reqbody-sha256"]; got != sha256Hex(body) {
			t.Errorf("origin got body sha256 %s, want %s", got, sha256Hex(body))
		}
	})
	t.Run("the access log and the process log name the rules", func(t *testing.T) {
		var line string
		testbed.Poll(10*time.Second, func() bool {
			for _, l := range readLog(log) {
				if strings.Contains(l, "/sqli-q?") {
					line = l
					return true
				}
			}
			return false
		})
		if !strings.Contains(line, `" 403 `) || !strings.Contains(line, `"waf=blocked score=`) || !strings.Contains(line, "942100") {
			t.Errorf("access log line %q: want 403 and waf=blocked with rule 942100", line)
		}
		if out := rj.Output(); !strings.Contains(out, "waf: blocked") || !strings.Contains(out, "942100") {
			t.Errorf("process log has no block with rule 942100:\n%s", out)
		}
	})
	t.Run("metrics count blocks by rule", func(t *testing.T) {
		if n, _ := metric(t, c, rj, `ramjet_waf_requests_total{outcome="blocked"}`); n < float64(len(attacks)) {
			t.Errorf("blocked = %v, want >= %d", n, len(attacks))
		}
		if n, _ := metric(t, c, rj, `ramjet_waf_rule_matches_total{rule="942100",outcome="blocked"}`); n < 1 {
			t.Errorf("942100 blocks = %v, want >= 1", n)
		}
	})
}

func TestWAFDetectModeLogsAndPasses(t *testing.T) {
	t.Parallel()
	o, rj, log := startWAF(t, "detect")
	c, ns := newClient(t), nsFor(t)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := a.send(t, c, rj.URL, ns)
			mustStatus(t, r, http.StatusOK, a.name+" in detect mode")
			if n := o.waitRequests(t, a.path(ns), 1); n != 1 {
				t.Errorf("the origin saw %d requests for %s, want 1", n, a.path(ns))
			}
		})
	}
	if n, _ := metric(t, c, rj, `ramjet_waf_requests_total{outcome="detected"}`); n != float64(len(attacks)) {
		t.Errorf("detected = %v, want %d", n, len(attacks))
	}
	if n, ok := metric(t, c, rj, `ramjet_waf_requests_total{outcome="blocked"}`); !ok || n != 0 {
		t.Errorf("blocked = %v (present %v), want 0", n, ok)
	}
	if out := rj.Output(); strings.Count(out, "waf: would block (detect mode)") != len(attacks) {
		t.Errorf("process log: want %d would-block lines:\n%s", len(attacks), out)
	}
	found := testbed.Poll(10*time.Second, func() bool {
		n := 0
		for _, l := range readLog(log) {
			if strings.Contains(l, `"waf=detected score=`) && strings.Contains(l, `" 200 `) {
				n++
			}
		}
		return n == len(attacks)
	})
	if !found {
		t.Errorf("access log: want %d lines with waf=detected:\n%s", len(attacks), strings.Join(readLog(log), "\n"))
	}
}

// TestWAFDoesNotEvaluateCachedPages: a fresh hit is served without the
// rules (the evaluation counter stays), over HTTP/1.1 and HTTP/2 alike,
// while the same URL with an attack in its query (another key) is
// evaluated and blocked.
func TestWAFDoesNotEvaluateCachedPages(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	h2cAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf("h2c:\n  listen: %q\ndefaults:\n  waf:\n    mode: block\n", h2cAddr)))
	c, h2 := newClient(t), h2cFrom(t, "127.0.0.1")
	evaluations := func() float64 {
		var sum float64
		for _, o := range []string{"passed", "detected", "blocked"} {
			n, _ := metric(t, c, rj, `ramjet_waf_requests_total{outcome="`+o+`"}`)
			sum += n
		}
		return sum
	}
	page, host := "/static/big2m.txt", "Host: waf.test" // one key on both listeners
	mustStatus(t, get(t, c, rj.URL+page, host), http.StatusOK, "miss")
	if n := evaluations(); n != 1 {
		t.Fatalf("evaluations after the miss = %v, want 1", n)
	}
	for i := range 20 {
		cl, base := c, rj.URL
		if i%2 == 1 {
			cl, base = h2, "http://"+h2cAddr
		}
		r := get(t, cl, base+page, host)
		mustStatus(t, r, http.StatusOK, "hit")
		if cs := r.CacheStatus(); !cs.Hit {
			t.Fatalf("request %d: Cache-Status %q, want a hit", i, r.Header.Get("Cache-Status"))
		}
	}
	if n := evaluations(); n != 1 {
		t.Errorf("evaluations after 20 hits = %v, want still 1", n)
	}
	for _, base := range []struct {
		c   *http.Client
		url string
	}{{c, rj.URL}, {h2, "http://" + h2cAddr}} {
		r := get(t, base.c, base.url+page+"?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", host)
		mustStatus(t, r, http.StatusForbidden, "the cached URL with an attack in its query")
	}
	if n := evaluations(); n != 3 {
		t.Errorf("evaluations = %v, want 3", n)
	}
	if n := o.waitRequests(t, page, 1); n != 1 {
		t.Errorf("origin saw %s %d times, want 1", page, n)
	}
}

// TestWAFAllowsTrustedNetworksByTheirRealAddress: waf.allow is judged on
// the client the client stage settled: behind a trusted proxy the one
// its X-Forwarded-For names, never the proxy.
func TestWAFAllowsTrustedNetworksByTheirRealAddress(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", `real_ip:
  from: ["127.0.0.1/32"]
defaults:
  waf:
    mode: block
    allow: ["192.0.2.0/24", "127.0.0.2/32"]
`))
	c, ns := newClient(t), nsFor(t)
	xss := "/e/" + ns + "/x?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"
	for _, tt := range []struct {
		name string
		c    *http.Client
		hdr  []string
		want int
	}{
		{"an allowed client named by the trusted proxy passes", c, []string{"X-Forwarded-For: 192.0.2.7"}, http.StatusOK},
		{"another client behind the proxy is inspected", c, []string{"X-Forwarded-For: 198.51.100.7"}, http.StatusForbidden},
		{"the proxy itself is inspected", c, nil, http.StatusForbidden},
		{"an allowed address connecting directly passes", clientFrom(t, "127.0.0.2"), nil, http.StatusOK},
		{"a direct client naming an allowed one is inspected", clientFrom(t, "127.0.0.3"), []string{"X-Forwarded-For: 192.0.2.7"}, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := get(t, tt.c, rj.URL+xss, tt.hdr...); r.Status != tt.want {
				t.Errorf("status %d, want %d", r.Status, tt.want)
			}
		})
	}
}

func TestWAFBodyLimit(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", `defaults:
  waf:
    mode: block
    body_limit: 1KiB
hosts:
  - names: [pass.test]
    waf:
      body_limit_action: pass
`))
	c, ns := newClient(t), nsFor(t)
	big := []byte("a=" + strings.Repeat("b", 4096))
	post := func(host string, body []byte, chunked bool) result {
		t.Helper()
		var rd io.Reader = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // no length: sent chunked
		}
		r, err := tryDo(c, "POST", rj.URL+"/e/"+ns+"/post", rd, "Host: "+host, "Content-Type: application/x-www-form-urlencoded")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("past the limit is refused by default", func(t *testing.T) {
		mustStatus(t, post("reject.test", big, false), http.StatusRequestEntityTooLarge, "declared length")
		mustStatus(t, post("reject.test", big, true), http.StatusRequestEntityTooLarge, "chunked")
	})
	t.Run("with pass it goes on uninspected and is counted", func(t *testing.T) {
		for _, chunked := range []bool{false, true} {
			r := post("pass.test", big, chunked)
			mustStatus(t, r, http.StatusOK, "uninspected")
			if got := r.Echo()["reqbody-sha256"]; got != sha256Hex(big) {
				t.Errorf("chunked %v: origin got body sha256 %s, want %s", chunked, got, sha256Hex(big))
			}
		}
		if n, _ := metric(t, c, rj, `ramjet_waf_body_total{outcome="uninspected"}`); n != 2 {
			t.Errorf("uninspected = %v, want 2", n)
		}
	})
	t.Run("an attack in the headers of an uninspected body is still blocked", func(t *testing.T) {
		r, err := tryDo(c, "POST", rj.URL+"/e/"+ns+"/post?id=1%27+OR+%271%27%3D%271", bytes.NewReader(big), "Host: pass.test", "Content-Type: application/x-www-form-urlencoded")
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, r, http.StatusForbidden, "attack in the query")
	})
}

// TestWAFRuleFilesMustCompile: ramjet check reports a rule file that does
// not compile at its key's line, and a reload naming it keeps the old
// rules serving; a good file then takes effect.
func TestWAFRuleFilesMustCompile(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.conf")
	bad := filepath.Join(dir, "bad.conf")
	newer := filepath.Join(dir, "newer.conf")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(good, `SecRule ARGS:token "@streq open-sesame" "id:10001,phase:1,deny,log,msg:'site rule'"`+"\n")
	write(bad, `SecRule ARGS:token "@nosuchoperator x" "id:10002,phase:1,deny"`+"\n")
	write(newer, `SecRule ARGS:token "@streq abracadabra" "id:10003,phase:1,deny,log,msg:'newer site rule'"`+"\n")
	cfg := func(file string) string {
		return fmt.Sprintf("defaults:\n  waf:\n    mode: block\n    rules:\n      - %s\n", file)
	}
	path := testbed.WriteConfig(t, dir, cfg(bad))
	code, out := testbed.RunRamjet(t, 30*time.Second, "check", "--config", path)
	if code != 1 || !strings.Contains(out, path+":4: defaults.waf.rules: ") || !strings.Contains(out, "nosuchoperator") {
		t.Fatalf("check: exit %d, output %q; want 1 and %s:4: defaults.waf.rules: … nosuchoperator", code, out, path)
	}
	testbed.WriteConfig(t, dir, cfg(good))
	if code, out := testbed.RunRamjet(t, 30*time.Second, "check", "--config", path); code != 0 {
		t.Fatalf("check of a good file: exit %d: %s", code, out)
	}
	rj := startRamjet(t, o.URL, "--config", path)
	c, ns := newClient(t), nsFor(t)
	status := func(token string) int { return get(t, c, rj.URL+"/e/"+ns+"/t?token="+token).Status }
	if s := status("open-sesame"); s != http.StatusForbidden {
		t.Fatalf("site rule: status %d, want 403", s)
	}
	from := len(rj.Output())
	testbed.WriteConfig(t, dir, cfg(bad))
	rj.WaitOutput(t, from, "reload failed; keeping the running config", 30*time.Second)
	if s := status("open-sesame"); s != http.StatusForbidden {
		t.Errorf("after the failed reload: status %d, want the old rule's 403", s)
	}
	from = len(rj.Output())
	testbed.WriteConfig(t, dir, cfg(newer))
	rj.WaitOutput(t, from, "config reloaded", 30*time.Second)
	if s, s2 := status("open-sesame"), status("abracadabra"); s != http.StatusOK || s2 != http.StatusForbidden {
		t.Errorf("after the good reload: old token %d, new token %d; want 200, 403", s, s2)
	}
}

// TestWAFInspectsResponsesWhenTheSiteAsks: with waf.responses a page that
// leaks a database error is stopped and never stored; without, it is
// served as the origin sent it.
func TestWAFInspectsResponsesWhenTheSiteAsks(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", `defaults:
  waf:
    mode: block
hosts:
  - names: [responses.test]
    waf:
      responses: true
`))
	c, ns := newClient(t), nsFor(t)
	page := "/static/leak-" + ns + ".txt"
	leak := "Query failed: You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1\n"
	if err := os.WriteFile(filepath.Join(docroot, page), []byte(leak), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r := get(t, c, rj.URL+page, "Host: responses.test")
		if r.Status != http.StatusForbidden || bytes.Contains(r.Body, []byte("SQL syntax")) {
			t.Fatalf("request %d with responses on: status %d, body %.100q; want 403 without the leak", i, r.Status, r.Body)
		}
	}
	if n := o.waitRequests(t, page, 2); n != 2 {
		t.Errorf("origin saw %d requests, want 2: a stopped answer is not stored", n)
	}
	if n, _ := metric(t, c, rj, `ramjet_waf_responses_total{outcome="blocked"}`); n != 2 {
		t.Errorf("responses blocked = %v, want 2", n)
	}
	for series, want := range map[string]float64{
		`ramjet_site_waf_blocked_total{site="responses.test"}`: 2, `ramjet_site_waf_blocked_total{site="_default"}`: 0,
	} {
		if n, ok := metric(t, c, rj, series); !ok || n != want {
			t.Errorf("%s = %v (present %v), want %v: each site counts its own", series, n, ok, want)
		}
	}
	r := get(t, c, rj.URL+page, "Host: other.test")
	if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte("SQL syntax")) {
		t.Errorf("without responses: status %d, want 200 with the page as sent", r.Status)
	}
}

// TestWAFSkipsStaticFilesWhenTheSiteSaysSo: with skip_static a docroot
// site's static files are served uninspected (they never reach PHP),
// counted, while its scripts are inspected; without it both are.
func TestWAFSkipsStaticFilesWhenTheSiteSaysSo(t *testing.T) {
	t.Parallel()
	root := phpDocroot(t)
	rj := startRamjet(t, "", "--config", testbed.WriteConfig(t, "", fmt.Sprintf(`defaults:
  docroot:
    root: %q
    php: {workers: 1}
  waf:
    mode: block
hosts:
  - names: [static.test]
    waf:
      skip_static: true
`, root)))
	c := newClient(t)
	xss := "?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"
	for _, tt := range []struct {
		host, path string
		want       int
	}{
		{"static.test", "/static/style.css" + xss, http.StatusOK},
		{"static.test", "/hello.php" + xss, http.StatusForbidden},
		{"other.test", "/static/style.css" + xss, http.StatusForbidden},
	} {
		if r := get(t, c, rj.URL+tt.path, "Host: "+tt.host); r.Status != tt.want {
			t.Errorf("%s%s: status %d, want %d", tt.host, tt.path, r.Status, tt.want)
		}
	}
	if n, _ := metric(t, c, rj, `ramjet_waf_skipped_total{reason="static"}`); n != 1 {
		t.Errorf("skipped static = %v, want 1", n)
	}
}
