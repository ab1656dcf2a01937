package main_test

// End-to-end tests of the forwarding fields a hostile client sends
// (issues 27 and 37): what ramjet sets reaches the origin and PHP as its
// only line, what only a trusted terminator may say goes nowhere from
// anyone else, over HTTP/1.1, h2c, h2 and HTTP/3 alike; and a cached page
// never carries the attacker's values to the next visitor.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// forgedFields is what an attacker sends with a request for a cacheable
// page: a second line of every field ramjet sets (PHP behind nginx reads
// the last), and the fields only a trusted terminator may send.
var forgedFields = []string{
	"X-Forwarded-Host: innocent.example", "X-Forwarded-Host: evil.example",
	"X-Forwarded-Proto: https", "X-Forwarded-Proto: https",
	"X-LSCACHE: on", "X-LSCACHE: crawler",
	"X-LSCACHE-VARY-VALUE: ismobile",
	"Surrogate-Capability: evil=\"Surrogate/1.0 ESI/1.0\"",
	"Forwarded: for=6.6.6.6;host=evil.example;proto=https",
	"X-Real-IP: 6.6.6.6",
	"X-Forwarded-Port: 8443",
	"X-Forwarded-Prefix: /evil",
}

// checkOriginFields fails for every field of the echo page e that is not
// what ramjet alone says for a request to host over scheme.
func checkOriginFields(t *testing.T, what string, e map[string]string, host, scheme string) {
	t.Helper()
	want := map[string]string{
		"hdr.x-forwarded-host":     host,
		"hdr.x-forwarded-proto":    scheme,
		"hdr.x-lscache":            "on",
		"hdr.x-lscache-vary-value": "",
		"hdr.surrogate-capability": `ramjet="Surrogate/1.0 ESI/1.0"`,
		"hdr.forwarded":            "",
		"hdr.x-real-ip":            "",
		"hdr.x-forwarded-port":     "",
		"hdr.x-forwarded-prefix":   "",
	}
	for k, v := range want {
		if e[k] != v {
			t.Errorf("%s: the origin's PHP saw %s %q, want %q", what, k, e[k], v)
		}
	}
}

// TestHostileForwardingFieldsNeverReachTheOriginOrTheNextVisitor: an
// attacker's duplicate X-Forwarded-Host (and the rest of forgedFields)
// on a miss that fills the cache reaches PHP behind nginx as ramjet's
// own values only, so the page the next visitor is served from the cache
// was built from those too; over HTTP/1.1, h2c, HTTP/2 over TLS and
// HTTP/3.
func TestHostileForwardingFieldsNeverReachTheOriginOrTheNextVisitor(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	h2cAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	rj := startH3Ramjet(t, newPKI(t), o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf(`h2c:
  listen: %q
`, h2cAddr)))
	page := "?" + hq("Cache-Control: public, max-age=300")
	for _, tt := range []struct {
		proto, base, host, scheme string
		c                         *http.Client
	}{
		{"h1", rj.URL, strings.TrimPrefix(rj.URL, "http://"), "http", newClient(t)},
		{"h2c", "http://" + h2cAddr, h2cAddr, "http", h2cFrom(t, "127.0.0.1")},
		{"h2", rj.HTTPS("localhost", ""), "localhost:" + rj.Port, "https", rj.client(t, "h2")},
		{"h3", rj.HTTPS("localhost", ""), "localhost:" + rj.Port, "https", rj.h3Client(t, nil)},
	} {
		t.Run(tt.proto, func(t *testing.T) {
			u := tt.base + "/e/" + nsFor(t) + page
			attacker := get(t, tt.c, u, forgedFields...)
			mustMissStored(t, attacker, "the attacker's request")
			checkOriginFields(t, "the attacker's miss", attacker.Echo(), tt.host, tt.scheme)
			visitor := get(t, tt.c, u)
			mustFreshHit(t, visitor, "the next visitor")
			if visitor.ID() != attacker.ID() {
				t.Fatalf("the visitor got another origin answer (%s), not the cached one", visitor.ID())
			}
			checkOriginFields(t, "the page cached for the next visitor", visitor.Echo(), tt.host, tt.scheme)
		})
	}
}

// TestHostileForwardingFieldsNeverReachPHPInDocrootMode: ramjet is the
// web server, PHP's HTTP_* come from the request's fields: a client's
// forged ones are no more PHP's than a proxied origin's.
func TestHostileForwardingFieldsNeverReachPHPInDocrootMode(t *testing.T) {
	t.Parallel()
	rj, _ := startPHP(t, "")
	c := newClient(t)
	u := rj.URL + "/fwdfields.php?ns=" + nsFor(t)
	want := map[string]string{
		"http_x_forwarded_host":     "", // ramjet's own say the client's connection: SERVER_NAME, HTTPS
		"http_x_forwarded_proto":    "",
		"http_x_lscache":            "on",
		"http_x_lscache_vary_value": "",
		"http_surrogate_capability": `ramjet="Surrogate/1.0 ESI/1.0"`,
		"http_forwarded":            "",
		"http_x_real_ip":            "",
		"http_x_forwarded_port":     "",
		"http_x_forwarded_prefix":   "",
		"https":                     "",
	}
	attacker := get(t, c, u, forgedFields...)
	mustMissStored(t, attacker, "the attacker's request")
	visitor := get(t, c, u)
	mustFreshHit(t, visitor, "the next visitor")
	for what, r := range map[string]result{"the attacker's miss": attacker, "the page cached for the next visitor": visitor} {
		e := r.Echo()
		for k, v := range want {
			if e[k] != v {
				t.Errorf("%s: PHP saw %s %q, want %q", what, k, e[k], v)
			}
		}
	}
}

// startTerminator is nginx on 127.0.0.1 in front of upstream as a TLS
// terminator would be (README's sandwich), saying how its client came
// in the fields only a trusted terminator may send.
func startTerminator(t testing.TB, upstream string) *testbed.Nginx {
	t.Helper()
	return testbed.StartNginx(t, testbed.NginxConfig{Server: fmt.Sprintf(`		location / {
			proxy_pass http://%s;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $host;
			proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
			proxy_set_header X-Real-IP $remote_addr;
			proxy_set_header X-Forwarded-Port 443;
			proxy_set_header Forwarded "for=$remote_addr;proto=https";
		}
`, upstream)})
}

// TestTrustedTerminatorsForwardingFieldsGoOn: the sandwich keeps
// working. What a behind_tls listener's terminator, or a peer in
// real_ip.from, says of its client (X-Real-IP, X-Forwarded-Port,
// Forwarded) reaches the origin as it said it; the same fields from a
// client connecting directly do not.
func TestTrustedTerminatorsForwardingFieldsGoOn(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	h2cAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf(`h2c:
  listen: %q
  behind_tls: true
real_ip:
  from: ["%s/32"]
`, h2cAddr, purgerAddr)))
	n := startTerminator(t, h2cAddr)
	claims := []string{"X-Real-IP: 6.6.6.6", "X-Forwarded-Port: 8443", "Forwarded: for=6.6.6.6;proto=https"}
	for _, tt := range []struct {
		name                   string
		c                      *http.Client
		base                   string
		hdr                    []string
		realIP, port, fwd, xfp string
	}{
		{"a behind_tls listener's terminator", clientFrom(t, outsideAddr), n.URL, nil,
			outsideAddr, "443", "for=" + outsideAddr + ";proto=https", "https"},
		{"a peer in real_ip.from", clientFrom(t, purgerAddr), rj.URL, claims,
			"6.6.6.6", "8443", "for=6.6.6.6;proto=https", "http"},
		{"anyone else", clientFrom(t, outsideAddr), rj.URL, claims, "", "", "", "http"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, tt.c, tt.base+"/e/"+nsFor(t), tt.hdr...)
			mustStatus(t, r, http.StatusOK, "GET from "+tt.name)
			e := r.Echo()
			for k, v := range map[string]string{"hdr.x-real-ip": tt.realIP, "hdr.x-forwarded-port": tt.port,
				"hdr.forwarded": tt.fwd, "hdr.x-forwarded-proto": tt.xfp} {
				if e[k] != v {
					t.Errorf("the origin saw %s %q, want %q", k, e[k], v)
				}
			}
		})
	}
}

// TestHostileForwardingFieldsNeverReachAnESIFragment: a fragment's
// request is built from its page's, and told the same of the client: an
// attacker's fields reach the fragment's PHP no more than the page's.
func TestHostileForwardingFieldsNeverReachAnESIFragment(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	page := rj.URL + esiPage("", []string{incl("/e/" + nsFor(t) + "-frag")})
	r := get(t, c, page, forgedFields...)
	mustStatus(t, r, http.StatusOK, "the ESI page")
	body := strings.ToLower(string(r.Body)) // echo.php writes the fields' names as PHP has them
	if !strings.Contains(body, "hdr.x-forwarded-host: "+strings.TrimPrefix(rj.URL, "http://")+"\n") {
		t.Fatalf("the fragment's echo is not in the page:\n%.2000s", body)
	}
	for _, forged := range []string{"evil", "6.6.6.6", "8443", "crawler", "ismobile", "hdr.x-forwarded-proto: https"} {
		if strings.Contains(body, forged) {
			t.Errorf("the fragment's PHP saw the attacker's %q:\n%.2000s", forged, body)
		}
	}
}

// TestForwardingKeepsTheClientsFieldOrder: replacing the client's
// X-Forwarded-For line leaves its other fields in their order: of two
// Accept-Language lines PHP behind nginx reads the last one, the one the
// client sent last (ramjet used to move it into X-Forwarded-For's place).
func TestForwardingKeepsTheClientsFieldOrder(t *testing.T) {
	t.Parallel()
	_, rj, _ := setup(t, "")
	r := rawRequest(t, rj.Addr, "GET /e/"+nsFor(t)+` HTTP/1.1
Host: order.test
X-Forwarded-For: 6.6.6.6
Accept-Language: fr
X-Other: 1
Accept-Language: en

`)
	mustStatus(t, r, http.StatusOK, "GET")
	if got := r.Echo()["hdr.accept-language"]; got != "en" {
		t.Errorf("PHP read Accept-Language %q, want the client's last line, en", got)
	}
}
