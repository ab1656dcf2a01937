package main_test

// End-to-end tests of the access log lines of requests fasthttp refuses
// before the proxy sees them (issue 37 §8): a scanner's malformed request
// line or oversized header must leave a line a fail2ban jail counts.

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// badRequestJail is what fail2ban's nginx-bad-request filter matches (its
// failregex, with <HOST> an address and the date as combined writes it),
// widened to the 408 and 431 ramjet also answers.
var badRequestJail = regexp.MustCompile(`^(\d+\.\d+\.\d+\.\d+) - \S+ \[[^\]]+\] "[^"]*" (400|408|431) \d+ "[^"]*" "[^"]*"$`)

// TestRefusedRequestsAreLogged: a request line fasthttp cannot parse and a
// header over max_header_bytes get 400 and 431 and a line each, with what
// could be read of the request, in the log of the site their Host names,
// or the default site's when there is none; a fail2ban jail counts them.
func TestRefusedRequestsAreLogged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shared, site := filepath.Join(dir, "access.log"), filepath.Join(dir, "site.log")
	_, rj, _ := setup(t, fmt.Sprintf(`server:
  max_header_bytes: 4KiB
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
