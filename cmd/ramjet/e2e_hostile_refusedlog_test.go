package main_test

// End-to-end tests of the access log lines of requests fasthttp refuses
// before the proxy sees them (issue 37 §8): a scanner's malformed request
// line or oversized header must leave a line a fail2ban jail counts.

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// badRequestJail is what fail2ban's nginx-bad-request filter matches (its
// failregex, with <HOST> an address and the date as combined writes it),
// widened to the 408 and 431 ramjet also answers.
var badRequestJail = regexp.MustCompile(`^(\d+\.\d+\.\d+\.\d+) - \S+ \[[^\]]+\] "[^"]*" (400|408|431) \d+ "[^"]*" "[^"]*"$`)

// TestRefusedRequestsAreLogged: a request line fasthttp cannot parse, a
// header over max_header_bytes and one that stops coming get 400, 431 and
// 408 and a line each, with what
// could be read of the request, in the log of the site their Host names,
// or the default site's when there is none; a fail2ban jail counts them.
func TestRefusedRequestsAreLogged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shared, site := filepath.Join(dir, "access.log"), filepath.Join(dir, "site.log")
	_, rj, _ := setup(t, fmt.Sprintf(`server:
  max_header_bytes: 4KiB
  header_timeout: 1s
access_log:
  path: %s
hosts:
  - names: [site.test]
    access_log: {path: %s}
`, shared, site))

	tests := []struct {
		name, req string
		status    int
		log       string
		request   string // the line's "$request"
	}{
		{"garbage without a Host", "GARBAGE\n\n", http.StatusBadRequest, shared, "GARBAGE"},
		{"a request line of four words", "GET /bad path HTTP/1.1\nHost: site.test\n\n", http.StatusBadRequest, site, "GET /bad path HTTP/1.1"},
		{"a header over max_header_bytes", "GET /big HTTP/1.1\nHost: site.test\nX-Big: " + strings.Repeat("a", 8<<10) + "\n\n",
			http.StatusRequestHeaderFieldsTooLarge, site, "GET /big HTTP/1.1"},
		{"a header that stops coming", "GET /slow HTTP/1.1\nHost: site.test\nX-Half: ", http.StatusRequestTimeout, site, "GET /slow HTTP/1.1"},
		{"a binary handshake on the plain port", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n\n", http.StatusBadRequest, shared, `\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03`},
	}
	want := map[string][]string{}
	for _, tt := range tests {
		r := rawRequest(t, rj.Addr, tt.req)
		if r.Status != tt.status {
			t.Fatalf("%s: status %d, want %d", tt.name, r.Status, tt.status)
		}
		want[tt.log] = append(want[tt.log], fmt.Sprintf(`"%s" %d %d`, tt.request, tt.status, len(r.Body)))
	}
	for path, lines := range want {
		got := waitLines(t, path, len(lines))
		for i, l := range got {
			if !strings.Contains(l, lines[i]) {
				t.Errorf("%s line %d: %q, want it to hold %q", filepath.Base(path), i, l, lines[i])
			}
			if m := badRequestJail.FindStringSubmatch(l); m == nil || m[1] != "127.0.0.1" {
				t.Errorf("%s line %d: %q is not counted for 127.0.0.1 by a fail2ban bad-request jail", filepath.Base(path), i, l)
			}
		}
	}
}

// TestRefusedRequestOverTLSIsLogged: HTTP/1.1 on the TLS listener is read
// by another server than the main listener's; what it refuses is logged
// all the same.
func TestRefusedRequestOverTLSIsLogged(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "access.log")
	p := newPKI(t)
	rj := startTLSRamjet(t, p, startOrigin(t).URL, "--config", testbed.WriteConfig(t, "", "access_log:\n  path: "+log+"\n"))
	c, err := tls.Dial("tcp", rj.TLSAddr, &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("GET /tls bad HTTP/1.1\r\nHost: localhost\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	l := waitLines(t, log, 1)[0]
	if m := badRequestJail.FindStringSubmatch(l); m == nil || m[1] != "127.0.0.1" || !strings.Contains(l, `"GET /tls bad HTTP/1.1" 400 `) {
		t.Errorf("line %q, want a 400 of \"GET /tls bad HTTP/1.1\" from 127.0.0.1", l)
	}
}
