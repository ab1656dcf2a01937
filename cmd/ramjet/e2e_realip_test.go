package main_test

// End-to-end tests of real client addresses behind a terminator (issue
// 15, section 5) through the built binary: real nginx in front, as
// proxy_pass with X-Forwarded-For to the h2c listener (README's
// sandwich) and as stream with proxy_protocol on to the main listener.
// Every party is on this machine, told apart by its loopback address:
// 127.0.0.1 is the terminator, 127.0.0.2 an outside client, 127.0.0.3 a
// trusted purger.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const (
	outsideAddr = "127.0.0.2"
	purgerAddr  = "127.0.0.3"
)

// dialerFrom dials from the loopback address src.
func dialerFrom(src string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
}

// clientFrom is an HTTP/1.1 client whose connections leave from src.
func clientFrom(t testing.TB, src string) *http.Client {
	t.Helper()
	c := newClient(t)
	c.Transport.(*http.Transport).DialContext = dialerFrom(src).DialContext
	return c
}

// h2cFrom speaks HTTP/2 with prior knowledge from src, as HAProxy's
// `proto h2` and Caddy's h2c:// do to the h2c listener.
func h2cFrom(t testing.TB, src string) *http.Client {
	t.Helper()
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		return dialerFrom(src).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// startXFFTerminator is nginx on 127.0.0.1 proxying to upstream as
// README's sandwich says: HTTP/1.1, Host kept, X-Forwarded-For appended.
func startXFFTerminator(t testing.TB, upstream string) *testbed.Nginx {
	t.Helper()
	return testbed.StartNginx(t, testbed.NginxConfig{Server: fmt.Sprintf(`		location / {
			proxy_pass http://%s;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $host;
			proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
		}
`, upstream)})
}

// forwardedFor is the X-Forwarded-For the origin saw for a GET of u.
func forwardedFor(t testing.TB, c *http.Client, u string, hdr ...string) string {
	t.Helper()
	r := get(t, c, u, hdr...)
	mustStatus(t, r, http.StatusOK, "GET "+u)
	return r.Echo()["hdr.x-forwarded-for"]
}

// purgeOutcome caches page a, sends a PURGE for it (with hdr) and
// reports the status and whether a was purged.
func purgeOutcome(t *testing.T, c *http.Client, base, ns string, hdr ...string) (int, bool) {
	t.Helper()
	ids := cachePages(t, c, base, ns, []string{"a"})
	r := do(t, c, "PURGE", base+purgePages["a"].uri(ns), hdr...)
	after := get(t, c, base+purgePages["a"].uri(ns))
	return r.Status, after.ID() != ids["a"]
}

// TestSandwichWithXForwardedFor: nginx terminating in front of the h2c
// listener with X-Forwarded-For, ramjet trusting only it (real_ip): the
// client is the one nginx saw, for PURGE trust and for the origin.
func TestSandwichWithXForwardedFor(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	h2cAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	accessLog := filepath.Join(t.TempDir(), "access.log")
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf(`h2c:
  listen: %q
  behind_tls: true
real_ip:
  from: ["127.0.0.1/32"]
purge:
  trusted: ["%s/32"]
access_log:
  path: %q
`, h2cAddr, purgerAddr, accessLog)))
	n := startXFFTerminator(t, h2cAddr)
	outside, purger := clientFrom(t, outsideAddr), clientFrom(t, purgerAddr)
	ns := nsFor(t)

	t.Run("the origin gets the outside client, not the terminator", func(t *testing.T) {
		r := get(t, outside, n.URL+"/e/"+ns+"/who")
		if e := r.Echo(); e["hdr.x-forwarded-for"] != outsideAddr || e["hdr.x-forwarded-proto"] != "https" {
			t.Errorf("origin saw X-Forwarded-For %q, -Proto %q; want %s, https", e["hdr.x-forwarded-for"], e["hdr.x-forwarded-proto"], outsideAddr)
		}
	})
	t.Run("a spoofed X-Forwarded-For stays the client's claim", func(t *testing.T) {
		if got, want := forwardedFor(t, outside, n.URL+"/e/"+ns+"/spoof", "X-Forwarded-For: "+purgerAddr), purgerAddr+", "+outsideAddr; got != want {
			t.Errorf("origin saw X-Forwarded-For %q, want %q", got, want)
		}
	})
	for _, tt := range []struct {
		name string
		c    *http.Client
		hdr  []string
		want int
	}{
		{"an outside client's PURGE is refused", outside, nil, http.StatusMethodNotAllowed},
		{"an outside client's tag PURGE is refused", outside, []string{"Surrogate-Key: t1"}, http.StatusMethodNotAllowed},
		{"an outside client naming the purger is refused", outside, []string{"X-Forwarded-For: " + purgerAddr}, http.StatusMethodNotAllowed},
		{"a trusted purger behind the same terminator purges", purger, nil, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, purged := purgeOutcome(t, tt.c, n.URL, nsFor(t), tt.hdr...)
			if status != tt.want || purged != (tt.want == http.StatusOK) {
				t.Errorf("PURGE: status %d, purged %v; want %d", status, purged, tt.want)
			}
		})
	}
	t.Run("over HTTP/2 the terminator names the purger", func(t *testing.T) {
		if status, purged := purgeOutcome(t, h2cFrom(t, "127.0.0.1"), "http://"+h2cAddr, nsFor(t), "X-Forwarded-For: "+purgerAddr); status != http.StatusOK || !purged {
			t.Errorf("PURGE: status %d, purged %v; want 200, purged", status, purged)
		}
	})
	t.Run("the terminator itself is nobody's purger", func(t *testing.T) {
		if status, purged := purgeOutcome(t, h2cFrom(t, "127.0.0.1"), "http://"+h2cAddr, nsFor(t)); status != http.StatusMethodNotAllowed || purged {
			t.Errorf("PURGE: status %d, purged %v; want 405", status, purged)
		}
	})
	t.Run("admin_allow judges the client the terminator names", func(t *testing.T) {
		admin := newClient(t) // from 127.0.0.1, which real_ip trusts
		for _, tt := range []struct {
			hdr  []string
			want int
		}{
			{[]string{"X-Forwarded-For: 192.0.2.1"}, http.StatusForbidden},
			{nil, http.StatusOK},
		} {
			r := do(t, admin, http.MethodPost, rj.AdminURL+"/purge?tag=nothing-"+ns, tt.hdr...)
			if r.Status != tt.want {
				t.Errorf("admin purge with %q: status %d, want %d", tt.hdr, r.Status, tt.want)
			}
		}
	})
	t.Run("the access log names the outside client of a refused PURGE", func(t *testing.T) {
		var lines []string
		found := testbed.Poll(10*time.Second, func() bool {
			lines = readLog(accessLog)
			for _, l := range lines {
				if strings.HasPrefix(l, outsideAddr+" - - [") && strings.Contains(l, `"PURGE /`) && strings.Contains(l, `" 405 `) {
					return true
				}
			}
			return false
		})
		if !found {
			t.Errorf("no line for %s's PURGE answered 405 in the access log:\n%s", outsideAddr, strings.Join(lines, "\n"))
		}
	})
	t.Run("a spoofed X-Forwarded-For from an untrusted peer is ignored", func(t *testing.T) {
		direct := clientFrom(t, outsideAddr)
		if got, want := forwardedFor(t, direct, rj.URL+"/e/"+ns+"/direct", "X-Forwarded-For: "+purgerAddr), purgerAddr+", "+outsideAddr; got != want {
			t.Errorf("origin saw X-Forwarded-For %q, want %q", got, want)
		}
		if status, purged := purgeOutcome(t, direct, rj.URL, nsFor(t), "X-Forwarded-For: "+purgerAddr); status != http.StatusMethodNotAllowed || purged {
			t.Errorf("PURGE: status %d, purged %v; want 405", status, purged)
		}
	})
}

// TestBehindTLSAloneTrustsNobody is the report: the sandwich as
// README had it (behind_tls, default loopback purge.trusted, no
// real_ip). The terminator's address no longer passes for a purger.
func TestBehindTLSAloneTrustsNobody(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	h2cAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf("h2c:\n  listen: %q\n  behind_tls: true\n", h2cAddr)))
	if !strings.Contains(rj.Output(), "h2c.behind_tls without h2c.proxy_protocol or real_ip") {
		t.Errorf("no warning about behind_tls alone in the log:\n%s", rj.Output())
	}
	n := startXFFTerminator(t, h2cAddr)
	if status, purged := purgeOutcome(t, clientFrom(t, outsideAddr), n.URL, nsFor(t)+"-sandwich"); status != http.StatusMethodNotAllowed || purged {
		t.Errorf("PURGE through the terminator: status %d, purged %v; want 405", status, purged)
	}
	// A loopback purger on the main listener is trusted as before.
	if status, purged := purgeOutcome(t, newClient(t), rj.URL, nsFor(t)+"-main"); status != http.StatusOK || !purged {
		t.Errorf("PURGE on the main listener: status %d, purged %v; want 200, purged", status, purged)
	}
}

// TestNginxStreamWithProxyProtocol: nginx stream relays TCP to the main
// listener with proxy_protocol on; ramjet takes the header from nginx
// only, and the client it names is the client.
func TestNginxStreamWithProxyProtocol(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf(`server:
  proxy_protocol:
    enabled: true
    allow: ["127.0.0.1/32"]
purge:
  trusted: ["%s/32"]
`, purgerAddr)))
	streamAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	testbed.StartNginx(t, testbed.NginxConfig{Main: fmt.Sprintf(`load_module /usr/lib/nginx/modules/ngx_stream_module.so;
stream {
	server {
		listen %s;
		proxy_pass %s;
		proxy_protocol on;
	}
}`, streamAddr, rj.Addr)})
	base := "http://" + streamAddr
	outside, purger := clientFrom(t, outsideAddr), clientFrom(t, purgerAddr)
	ns := nsFor(t)

	t.Run("the origin gets the client the header names", func(t *testing.T) {
		if got := forwardedFor(t, outside, base+"/e/"+ns+"/who", "X-Forwarded-For: "+purgerAddr); got != purgerAddr+", "+outsideAddr {
			t.Errorf("origin saw X-Forwarded-For %q, want %q", got, purgerAddr+", "+outsideAddr)
		}
	})
	t.Run("an outside client's PURGE is refused", func(t *testing.T) {
		if status, purged := purgeOutcome(t, outside, base, nsFor(t)); status != http.StatusMethodNotAllowed || purged {
			t.Errorf("PURGE: status %d, purged %v; want 405", status, purged)
		}
	})
	t.Run("a trusted purger behind the same relay purges", func(t *testing.T) {
		if status, purged := purgeOutcome(t, purger, base, nsFor(t)); status != http.StatusOK || !purged {
			t.Errorf("PURGE: status %d, purged %v; want 200, purged", status, purged)
		}
	})
	// What nginx did not relay is refused before it is read.
	refusedBefore := refusedConnections(t, rj)
	for _, tt := range []struct{ name, from, send string }{
		{"a PROXY header from an unlisted network", outsideAddr,
			"PROXY TCP4 " + purgerAddr + " 127.0.0.1 40000 80\r\nPURGE " + purgePages["a"].uri(ns) + " HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"the relay's network without a header", "127.0.0.1", "PURGE " + purgePages["a"].uri(ns) + " HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if answer := rawExchange(t, tt.from, rj.Addr, tt.send); answer != "" {
				t.Errorf("answered %q, want the connection closed unanswered", answer)
			}
		})
	}
	if got := refusedConnections(t, rj) - refusedBefore; got != 2 {
		t.Errorf("ramjet_proxy_protocol_refused_total grew by %d, want 2", got)
	}
}

// rawExchange writes send from src to addr and returns all that comes
// back before the connection closes.
func rawExchange(t *testing.T, src, addr, send string) string {
	t.Helper()
	c, err := dialerFrom(src).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, send); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil && !isConnReset(err) {
		t.Fatalf("reading the answer: %v", err)
	}
	return string(b)
}

func isConnReset(err error) bool { return strings.Contains(err.Error(), "connection reset") }

// refusedConnections reads the main listener's PROXY protocol refusal
// counter from /metrics.
func refusedConnections(t *testing.T, rj *testbed.Ramjet) int {
	t.Helper()
	r := get(t, newClient(t), rj.AdminURL+"/metrics")
	sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), `ramjet_proxy_protocol_refused_total{listener="main"} `); ok {
			var n int
			fmt.Sscan(v, &n)
			return n
		}
	}
	return 0
}

// TestTLSListenerTakesTheProxyHeaderBeforeTheHandshake: as nginx stream
// or HAProxy passing TLS through send it, the header comes first, then
// the ClientHello.
func TestTLSListenerTakesTheProxyHeaderBeforeTheHandshake(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	p := newPKI(t)
	tlsAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf(`tls:
  listen: %q
  cert: %q
  key: %q
  proxy_protocol:
    enabled: true
    allow: ["127.0.0.1/32"]
`, tlsAddr, p.cert, p.key)))
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost"},
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, tlsAddr)
			if err != nil {
				return nil, err
			}
			if _, err := io.WriteString(c, "PROXY TCP4 192.0.2.44 198.51.100.1 40000 443\r\n"); err != nil {
				return nil, err
			}
			tc := tls.Client(c, &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost"})
			return tc, tc.HandshakeContext(ctx)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	r := get(t, c, "https://localhost/e/"+nsFor(t)+"/who")
	if e := r.Echo(); e["hdr.x-forwarded-for"] != "192.0.2.44" || e["hdr.x-forwarded-proto"] != "https" {
		t.Errorf("origin saw X-Forwarded-For %q, -Proto %q; want 192.0.2.44, https", e["hdr.x-forwarded-for"], e["hdr.x-forwarded-proto"])
	}
}
