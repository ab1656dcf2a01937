package main_test

// End-to-end tests of the access log (issue 15 §2), through the built
// binary: every client request — hits, misses, passes, errors, HTTP/2
// inline hits — has its line, in the combined format byte for byte as
// nginx writes it for the same request (and read by GoAccess, a real
// consumer), in the ramjet format and as JSON; no credential reaches it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// combinedLine is Apache's and nginx's combined format.
var combinedLine = regexp.MustCompile(`^(\S+) - - \[(\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "([^"]*)" (\d{3}) (\d+|-) "([^"]*)" "([^"]*)"`)

// rjLine is what the ramjet format adds after the combined fields.
var rjLine = regexp.MustCompile(`" "([^"]*)" (\d+\.\d{6}) (\d+\.\d{6}|-) (\S+)$`)

// readLog is the lines of an access log file (none when it is missing).
func readLog(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// waitLines waits until path holds n lines (ramjet writes a line within
// 100 ms) and returns them; more than n fails the test.
func waitLines(t testing.TB, path string, n int) []string {
	t.Helper()
	var lines []string
	testbed.Poll(10*time.Second, func() bool { lines = readLog(path); return len(lines) >= n })
	if len(lines) != n {
		t.Fatalf("%s holds %d lines, want %d:\n%s", path, len(lines), n, strings.Join(lines, "\n"))
	}
	return lines
}

// sent is what a request got, as the log must tell it.
type sent struct {
	request string // "GET /uri HTTP/1.1"
	status  int
	bytes   string // the body length, "-" for a stream of unknown length
	cache   string // Cache-Status, "-" for none
}

// sentOf describes r as its line must: HEAD sends no body, a response
// without Content-Length (chunked) has no known length.
func sentOf(method, uri string, r result) sent {
	s := sent{request: method + " " + uri + " HTTP/1.1", status: r.Status, bytes: strconv.Itoa(len(r.Body)),
		cache: r.Header.Get("Cache-Status")}
	if r.Header.Get("Content-Length") == "" && method != http.MethodHead {
		s.bytes = "-"
	}
	if s.cache == "" {
		s.cache = "-"
	}
	return s
}

func TestAccessLogRecordsHitsMissesPassesAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	combined, jsonLog, rjLog := filepath.Join(dir, "access.log"), filepath.Join(dir, "json.log"), filepath.Join(dir, "ramjet.log")
	o, rj, c := setup(t, fmt.Sprintf(`server:
  max_request_body: 1KiB
access_log:
  path: %s
hosts:
  - names: [json.test]
    access_log: {path: %s, format: json}
  - names: [rj.test]
    access_log: {path: %s, format: ramjet}
`, combined, jsonLog, rjLog))
	secret := "Basic " + "U0VDUkVULVVTRVI6U0VDUkVULVBBU1M=" // SECRET-USER:SECRET-PASS
	page := "/static/page725.html"
	type req struct {
		method, uri string
		hdr         []string
		body        string
	}
	reqs := []req{
		{"GET", page, nil, ""},  // miss
		{"GET", page, nil, ""},  // hit
		{"HEAD", page, nil, ""}, // hit, no body
		{"GET", page + "?utm_source=news&q=%22x%22&e=caf%C3%A9", []string{"Referer: https://ref.test/?a=1"}, ""}, // the query as sent
		{"GET", "/e/al-bypass", []string{"Cookie: wordpress_logged_in_x=SECRET-COOKIE"}, ""},                     // pass
		{"GET", "/e/al-chunked?chunked=1&size=3000", []string{"Cookie: wordpress_logged_in_x=1"}, ""},            // pass, streamed
		{"POST", "/e/al-post", []string{"Authorization: " + secret}, "x=1"},                                      // pass
		{"GET", "/static/nope.html", nil, ""},                                                                    // the origin's 404
		{"POST", "/e/al-big", nil, strings.Repeat("x", 2048)},                                                    // ramjet's 413
	}
	var want []sent
	for _, r := range reqs {
		res, err := tryDo(c, r.method, rj.URL+r.uri, strings.NewReader(r.body), r.hdr...)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.uri, err)
		}
		want = append(want, sentOf(r.method, r.uri, res))
	}
	checkFormatPerHost(t, rj.URL, jsonLog, rjLog)
	o.Stop()
	want = append(want, sentOf("GET", "/e/al-down", get(t, c, rj.URL+"/e/al-down"))) // ramjet's 502
	if want[0].cache != "ramjet; fwd=miss; stored" || want[1].cache != "ramjet; hit" || want[len(want)-1].status != 502 || want[len(want)-2].status != 413 {
		t.Fatalf("the requests did not get what the test is about: %+v", want)
	}

	lines := waitLines(t, combined, len(want))
	for i, l := range lines {
		m := combinedLine.FindStringSubmatch(l)
		if m == nil || !strings.HasSuffix(l, `"`) {
			t.Fatalf("line %d is not a combined line: %q", i, l)
		}
		got := sent{request: m[3], status: atoi(t, m[4]), bytes: m[5], cache: want[i].cache}
		if got != want[i] || m[1] != "127.0.0.1" || m[7] != "Go-http-client/1.1" {
			t.Errorf("line %d: %q\nwant %+v from 127.0.0.1 by Go-http-client/1.1", i, l, want[i])
		}
	}
	if m := combinedLine.FindStringSubmatch(lines[3]); m[6] != "https://ref.test/?a=1" {
		t.Errorf("referer written as %q", m[6])
	}
	checkNoCredentials(t, combined)
	checkGoAccessReads(t, combined, len(want), map[string]int{"2xx": 7, "4xx": 2, "5xx": 1})
}

// checkFormatPerHost: hosts with a file of their own get their lines
// there, in their format, naming their site: a miss with its origin
// time, then a hit without one.
func checkFormatPerHost(t *testing.T, base, jsonLog, rjLog string) {
	t.Helper()
	c := newClient(t)
	for _, host := range []string{"json.test", "rj.test"} {
		mustMissStored(t, get(t, c, base+"/static/page725.html", "Host: "+host), host)
		mustFreshHit(t, get(t, c, base+"/static/page725.html", "Host: "+host), host)
	}
	caches := []string{"ramjet; fwd=miss; stored", "ramjet; hit"}
	for i, l := range waitLines(t, jsonLog, 2) {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("json line %d: %v: %s", i, err, l)
		}
		if v["status"] != 200.0 || v["body_bytes_sent"] != 725.0 || v["cache_status"] != caches[i] ||
			v["site"] != "json.test" || v["request_uri"] != "/static/page725.html" || v["server_protocol"] != "HTTP/1.1" ||
			v["remote_addr"] != "127.0.0.1" || (v["origin_time"] == nil) != (i == 1) {
			t.Errorf("json line %d: %s", i, l)
		}
	}
	for i, l := range waitLines(t, rjLog, 2) {
		m := rjLine.FindStringSubmatch(l)
		if !combinedLine.MatchString(l) || m == nil || m[1] != caches[i] || (m[3] == "-") != (i == 1) || m[4] != "rj.test" {
			t.Errorf("ramjet line %d: %q", i, l)
		}
	}
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkNoCredentials: Authorization and Cookie values never reach a log.
func checkNoCredentials(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"SECRET", "U0VDUkVU", "wordpress_logged_in"} {
		if strings.Contains(string(b), s) {
			t.Errorf("%q reached the access log:\n%s", s, b)
		}
	}
}

// checkGoAccessReads runs GoAccess, a real consumer of the combined
// format, over the file: every line valid, statuses counted by class.
func checkGoAccessReads(t *testing.T, path string, n int, classes map[string]int) {
	t.Helper()
	bin, err := exec.LookPath("goaccess")
	if err != nil {
		t.Fatalf("goaccess not found (install the Debian package goaccess): %v", err)
	}
	cmd := exec.CommandContext(withTimeout(t, 30*time.Second), bin, path, "--log-format=COMBINED", "--no-global-config", "-o", "json")
	out, err := cmd.Output() // the report; its progress goes to stderr
	if err != nil {
		t.Fatalf("goaccess: %v", err)
	}
	var report struct {
		General struct {
			Total  int `json:"total_requests"`
			Valid  int `json:"valid_requests"`
			Failed int `json:"failed_requests"`
		} `json:"general"`
		Status struct {
			Data []struct {
				Data string `json:"data"`
				Hits struct {
					Count int `json:"count"`
				} `json:"hits"`
			} `json:"data"`
		} `json:"status_codes"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("goaccess report: %v\n%s", err, out)
	}
	if g := report.General; g.Total != n || g.Valid != n || g.Failed != 0 {
		t.Errorf("goaccess read %d lines, %d valid, %d failed; want %d valid", g.Total, g.Valid, g.Failed, n)
	}
	got := map[string]int{}
	for _, s := range report.Status.Data {
		got[s.Data[:3]] = s.Hits.Count
	}
	for class, want := range classes {
		if got[class] != want {
			t.Errorf("goaccess counted %d %s responses, want %d (all: %v)", got[class], class, want, got)
		}
	}
}

// TestAccessLogCombinedIsNginxsLineForTheSameRequest: the same bytes sent
// to nginx (logging combined) and through ramjet give the same line,
// but for the time: escaped quotes, backslashes and UTF-8 in the agent,
// the query as sent, a referer, HEAD, a 404, a 304, HTTP/1.0 without a
// Host, a request without agent or referer; ramjet's from the origin
// (miss) and from its cache (hit) alike.
func TestAccessLogCombinedIsNginxsLineForTheSameRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ours, theirs := filepath.Join(dir, "ramjet.log"), filepath.Join(dir, "nginx.log")
	ref := testbed.StartNginx(t, testbed.NginxConfig{HTTP: nginxHTTP, Server: fmt.Sprintf(
		"root %s;\naccess_log %s combined;\nlocation /static/ { add_header Cache-Control \"public, max-age=300\"; }\n", docroot, theirs)})
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "access_log:\n  path: "+ours+"\n"))

	page := "GET /static/page725.html?q=%22a%22&x=caf%C3%A9 HTTP/1.1\nHost: ref.test\n" +
		"User-Agent: Mozilla/5.0 \"quoted\" \\back café\nReferer: https://ref.example/a?b=1\nConnection: close\n\n"
	first := rawRequest(t, ref.Addr, page)
	etag := first.Header.Get("ETag")
	reqs := []string{
		page, // ramjet: miss
		page, // ramjet: hit
		strings.Replace(page, "GET ", "HEAD ", 1),
		"GET /static/nope.html HTTP/1.1\nHost: ref.test\nUser-Agent: t\nConnection: close\n\n",
		"GET /static/page725.html?q=%22a%22&x=caf%C3%A9 HTTP/1.1\nHost: ref.test\nIf-None-Match: " + etag + "\nConnection: close\n\n",
		"GET /static/page725.html HTTP/1.0\n\n",
		"GET /static/page725.html?plain HTTP/1.1\nHost: ref.test\nConnection: close\n\n",
	}
	for i, r := range reqs {
		a, b := rawRequest(t, ref.Addr, r), rawRequest(t, rj.Addr, r)
		if a.Status != b.Status || len(a.Body) != len(b.Body) {
			t.Fatalf("request %d: nginx answered %d with %d bytes, ramjet %d with %d", i, a.Status, len(a.Body), b.Status, len(b.Body))
		}
	}
	got := waitLines(t, ours, len(reqs))
	want := waitLines(t, theirs, len(reqs)+1)[1:] // the first was the ETag's
	stamp := regexp.MustCompile(`\[[^\]]+\]`)
	for i := range reqs {
		g, w := stamp.ReplaceAllString(got[i], "[TIME]"), stamp.ReplaceAllString(want[i], "[TIME]")
		if g != w {
			t.Errorf("request %d:\nramjet %s\nnginx  %s", i, g, w)
		}
	}
	if !strings.Contains(got[0], `"Mozilla/5.0 \x22quoted\x22 \x5Cback caf\xC3\xA9"`) {
		t.Errorf("the agent is not escaped as nginx escapes it: %s", got[0])
	}
}

// TestAccessLogHasHTTP2AndInlineHits: requests over HTTP/2, the fresh
// hits its connection goroutine answers inline included, are logged as
// nginx logs them ("HTTP/2.0"), beside HTTP/1.1 over TLS.
func TestAccessLogHasHTTP2AndInlineHits(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "access.log")
	o := startOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), o.URL, "--config", testbed.WriteConfig(t, "", "access_log:\n  path: "+log+"\n  format: ramjet\n"))
	h2, h1 := rj.client(t, "h2"), rj.client(t, "h1")
	url := rj.HTTPS("localhost", "/static/page725.html")
	mustMissStored(t, get(t, h2, url), "h2 miss")
	mustFreshHit(t, get(t, h2, url), "h2 hit (inline)")
	mustFreshHit(t, get(t, h1, url), "h1 hit")
	want := []struct{ proto, cache string }{{"HTTP/2.0", "ramjet; fwd=miss; stored"}, {"HTTP/2.0", "ramjet; hit"}, {"HTTP/1.1", "ramjet; hit"}}
	for i, l := range waitLines(t, log, len(want)) {
		m, r := combinedLine.FindStringSubmatch(l), rjLine.FindStringSubmatch(l)
		if m == nil || r == nil || m[3] != "GET /static/page725.html "+want[i].proto || m[4] != "200" || m[5] != "725" ||
			r[1] != want[i].cache || r[4] != "localhost" {
			t.Errorf("line %d: %s\nwant %s with %q, 200, 725 bytes, site localhost", i, l, want[i].proto, want[i].cache)
		}
	}
}
