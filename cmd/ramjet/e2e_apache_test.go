package main_test

// End-to-end tests with Apache 2.4 as the origin, configured as README's
// steps and conf/apache-origin.conf say (testbed.ApacheOrigin includes
// that very file): Debian's apache2 with the event MPM, php-fpm through
// mod_proxy_fcgi, mod_remoteip, mod_deflate on, keep-alive as Apache's
// default 5 s, serving the same docroot as the nginx origin (issue 15 §3).

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// apacheOrigin is Apache + php-fpm serving the docroot.
type apacheOrigin struct {
	*origin
	apache *testbed.Apache
	// combined is the virtual host's CustomLog in the combined format
	// (the snippet's, with %a); peers logs the connection's peer (%{c}a)
	// next to the client (%a) and the path.
	combined, peers string
}

// startApacheOrigin starts php-fpm and Apache in front of it and waits
// until both answer. Both are stopped when the test ends.
func startApacheOrigin(t testing.TB) *apacheOrigin {
	t.Helper()
	o, dir := startPHPOrigin(t)
	a := &apacheOrigin{origin: o, combined: filepath.Join(dir, "combined.log"), peers: filepath.Join(dir, "peers.log")}
	a.apache = testbed.StartApache(t, testbed.ApacheOrigin(t, o.fpm.Addr, apacheVHost(o.markDir, a.combined, a.peers)))
	o.web, o.URL, o.Addr = a.apache, a.apache.URL, a.apache.Addr
	o.waitReady(t)
	return a
}

// apacheVHost is the origin's virtual host, what nginxServer is for nginx:
// the docroot, echo.php under /e/, upload.php, any other script through
// the php-fpm handler of the server config.
func apacheVHost(markDir, combined, peers string) string {
	return fmt.Sprintf(`	DocumentRoot %[1]s
	<Directory %[1]s>
		Require all granted
	</Directory>
	# Generated static files, cacheable for five minutes; /stream/ has
	# no freshness information.
	<Location /static/>
		Header set Cache-Control "public, max-age=300"
	</Location>
	# /e/<name> runs echo.php: every test uses its own paths.
	AliasMatch ^/e/ %[1]s/echo.php
	Alias /upload %[1]s/upload.php
	SetEnv RAMJET_MARK_DIR %[2]s
	CustomLog %[3]s combined
	CustomLog %[4]s "%%{c}a %%a %%U"
`, docroot, markDir, combined, peers)
}

// logLine is the first line of the log file whose fields include path,
// split into fields; nil when there is none yet.
func logLine(t testing.TB, file, path string) []string {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for _, field := range fields {
			if p, _, _ := strings.Cut(field, "?"); p == path {
				return fields
			}
		}
	}
	return nil
}

// waitLogLine waits for logLine.
func waitLogLine(t testing.TB, file, path string) []string {
	t.Helper()
	var fields []string
	if !testbed.Poll(5*time.Second, func() bool { fields = logLine(t, file, path); return fields != nil }) {
		t.Fatalf("%s has no line for %s within 5 s", filepath.Base(file), path)
	}
	return fields
}

func TestApacheOriginPagesMissHitAndPurge(t *testing.T) {
	t.Parallel()
	a := startApacheOrigin(t)
	rj := startRamjet(t, a.URL)
	c := newClient(t)
	ns := nsFor(t)

	t.Run("static file", func(t *testing.T) {
		const path = "/static/page725.html"
		before := a.loggedRequests(t, path) // waitReady's
		u := rj.URL + path
		mustMissStored(t, get(t, c, u), "first GET")
		mustFreshHit(t, get(t, c, u), "second GET")
		if n := a.waitRequests(t, path, before+1); n != before+1 {
			t.Fatalf("Apache served the file %d times for a miss and a hit, want 1", n-before)
		}
		mustStatus(t, do(t, c, "PURGE", u), http.StatusOK, "PURGE")
		mustMissStored(t, get(t, c, u), "GET after PURGE")
		if n := a.waitRequests(t, path, before+2); n != before+2 {
			t.Fatalf("Apache served the file %d times after the PURGE, want 2", n-before)
		}
	})

	t.Run("PHP pages", func(t *testing.T) {
		ids := cachePages(t, c, rj.URL, ns, tagPages)
		for _, name := range tagPages {
			if n := a.waitRequests(t, "/e/"+ns+"/"+purgePages[name].path, 1); n != 1 {
				t.Fatalf("page %s: Apache saw %d requests for a miss and a hit, want 1", name, n)
			}
		}
		// A tag purge on an Apache response (a: t1, not b's t1x), PURGE of
		// a URL (d), and PURGE with a tag in X-LiteSpeed-Purge (c: t2).
		mustStatus(t, get(t, c, rj.URL+"/e/"+ns+"/purger?"+hq("Cache-Control: no-store", "X-LiteSpeed-Purge: tag=t1")), http.StatusOK, "page that purges t1")
		mustStatus(t, do(t, c, "PURGE", rj.URL+purgePages["d"].uri(ns)), http.StatusOK, "PURGE of d")
		mustStatus(t, do(t, c, "PURGE", rj.URL+"/", "X-LiteSpeed-Purge: tag=t2"), http.StatusOK, "PURGE of tag t2")
		want := fates(tagPages, []string{"a", "c", "d"}, nil)
		checkFates(t, c, rj.URL, ns, ids, want)
		for name, f := range want {
			n := 1
			if f == hard {
				n = 2
			}
			if got := a.waitRequests(t, "/e/"+ns+"/"+purgePages[name].path, n); got != n {
				t.Errorf("page %s (%s): Apache saw %d requests, want %d", name, f, got, n)
			}
		}
	})
}

func TestApacheDeflateLeavesRamjetOneIdentityCopyToEncode(t *testing.T) {
	t.Parallel()
	a := startApacheOrigin(t)
	rj := startRamjet(t, a.URL)
	c := newClient(t)
	query := "?size=8192&" + hq("Cache-Control: max-age=300")

	// mod_deflate is on: asked directly, Apache gzips the page.
	direct := get(t, c, a.URL+"/e/deflate-direct"+query, "Accept-Encoding: gzip")
	if ce := direct.Header.Get("Content-Encoding"); ce != "gzip" {
		t.Fatalf("Apache's own answer to Accept-Encoding: gzip has Content-Encoding %q, want gzip (mod_deflate on)", ce)
	}

	u := rj.URL + "/e/deflate" + query
	fill := get(t, c, u, "Accept-Encoding: gzip")
	mustMissStored(t, fill, "first GET")
	if ae, ok := parseEcho(decodeBody(t, fill))["hdr.accept-encoding"]; ok {
		t.Fatalf("the fill reached Apache with Accept-Encoding %q, want none (an identity body to store)", ae)
	}
	stored := decodeBody(t, fill)
	for _, tt := range []struct{ accept, want string }{
		{"br", "br"}, // mod_deflate makes no brotli: ramjet's own
		{"gzip", "gzip"},
		{"", ""},
	} {
		var hdr []string
		if tt.accept != "" {
			hdr = []string{"Accept-Encoding: " + tt.accept}
		}
		r := get(t, c, u, hdr...)
		mustFreshHit(t, r, "GET with Accept-Encoding "+tt.accept)
		if ce := r.Header.Get("Content-Encoding"); ce != tt.want {
			t.Errorf("hit for Accept-Encoding %q: Content-Encoding %q, want %q", tt.accept, ce, tt.want)
		}
		if body := decodeBody(t, r); string(body) != string(stored) {
			t.Errorf("hit for Accept-Encoding %q decodes to %d bytes other than the stored %d", tt.accept, len(body), len(stored))
		}
	}
	if n := a.waitRequests(t, "/e/deflate", 1); n != 1 {
		t.Errorf("Apache saw %d requests for the page, want 1: every encoding is served from one stored copy", n)
	}

	// A request ramjet passes without trying to store (a logged-in
	// user's) goes with the client's Accept-Encoding, and the client gets
	// Apache's gzip.
	pass := get(t, c, u, "Accept-Encoding: gzip", "Cookie: wordpress_logged_in_1=admin")
	mustStatus(t, pass, http.StatusOK, "logged-in GET")
	if cs := pass.CacheStatus(); cs.Hit || cs.Stored {
		t.Errorf("logged-in GET: Cache-Status %q, want it passed", cs.Raw)
	}
	if ce := pass.Header.Get("Content-Encoding"); ce != "gzip" {
		t.Errorf("logged-in GET: Content-Encoding %q, want Apache's gzip", ce)
	}
	if ae := parseEcho(decodeBody(t, pass))["hdr.accept-encoding"]; ae != "gzip" {
		t.Errorf("logged-in GET reached Apache with Accept-Encoding %q, want the client's gzip", ae)
	}
}

func TestApacheLogsTheClientRamjetForwardsNotRamjet(t *testing.T) {
	t.Parallel()
	a := startApacheOrigin(t)
	rj := startRamjet(t, a.URL)
	const client = "127.0.0.2"
	c := clientFrom(t, client)
	tests := []struct {
		name string
		hdr  []string
		left string // X-Forwarded-For as PHP gets it: what mod_remoteip did not take
	}{
		{"without X-Forwarded-For", nil, ""},
		// ramjet appends the client's address; only that last hop is
		// trusted, so a client cannot choose what Apache logs.
		{"with a forged X-Forwarded-For", []string{"X-Forwarded-For: 203.0.113.9"}, "203.0.113.9"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("/e/remoteip-%d", i)
			r := get(t, c, rj.URL+path+"?"+hq("Cache-Control: no-store"), tt.hdr...)
			mustStatus(t, r, http.StatusOK, "GET")
			if got := r.Echo()["remote-addr"]; got != client {
				t.Errorf("PHP got REMOTE_ADDR %q, want the client %s", got, client)
			}
			if xff := r.Echo()["hdr.x-forwarded-for"]; xff != tt.left {
				t.Errorf("PHP got X-Forwarded-For %q, want %q", xff, tt.left)
			}
			if line := waitLogLine(t, a.combined, path); line[0] != client {
				t.Errorf("combined log: %q, want the client %s first", strings.Join(line, " "), client)
			}
			if line := waitLogLine(t, a.peers, path); line[0] != "127.0.0.1" || line[1] != client {
				t.Errorf("peers log (%%{c}a %%a %%U): %q, want ramjet's 127.0.0.1 as the peer and %s as the client", strings.Join(line, " "), client)
			}
		})
	}
}

// TestApacheKeepAliveTimeoutNeverMeetsAReusedConnection runs Apache with
// the snippet's KeepAliveTimeout 5 as it is (not shortened for speed: the
// pair under test is ramjet's default idle timeout against Apache's
// default) and watches ramjet's pooled connection to it in /proc/net/tcp:
// the end that leaves ESTABLISHED for FIN_WAIT/TIME_WAIT closed first.
// Each case waits 4-5 s, in parallel.
func TestApacheKeepAliveTimeoutNeverMeetsAReusedConnection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		config      string // ramjet's file; "" = the defaults
		ramjetFirst bool   // ramjet closes the idle connection, not Apache
		method      string // the request sent once it is closed
		retries     float64
	}{
		// Closed by ramjet at 4 s: even a POST, never sent again, is
		// answered on a new connection.
		{"default idle timeout 4s under KeepAliveTimeout 5", "", true, http.MethodPost, 0},
		// What the snippet warns of: Apache closes first, and the next
		// request meets a dead connection; a GET is sent again.
		{"idle timeout 10s over KeepAliveTimeout 5", "origin:\n  idle_timeout: 10s\n", false, http.MethodGet, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := startApacheOrigin(t)
			var args []string
			if tt.config != "" {
				args = []string{"--config", testbed.WriteConfig(t, "", tt.config)}
			}
			rj := startRamjet(t, a.URL, args...)
			c := newClient(t)
			page := rj.URL + "/e/keepalive?" + hq("Cache-Control: no-store")
			mustStatus(t, get(t, c, page), http.StatusOK, "first GET")
			mustStatus(t, get(t, c, page), http.StatusOK, "second GET")
			conn := pooledConn(t, rj, a.Addr)
			idle := time.Now()
			state := waitClosed(t, conn)
			t.Logf("ramjet's end %s after %v idle", state.State, time.Since(idle).Round(10*time.Millisecond))
			if state.ClosedHere() != tt.ramjetFirst {
				t.Fatalf("ramjet's end of the idle connection is %s: closed first by ramjet %v, want %v", state.State, state.ClosedHere(), tt.ramjetFirst)
			}
			var body io.Reader
			if tt.method == http.MethodPost {
				body = strings.NewReader("comment=after+the+idle+time")
			}
			r, err := tryDo(c, tt.method, page, body)
			if err != nil {
				t.Fatal(err)
			}
			mustStatus(t, r, http.StatusOK, tt.method+" after the idle time")
			if n, _ := metric(t, c, rj, "ramjet_origin_retries_total"); n != tt.retries {
				t.Errorf("ramjet_origin_retries_total = %v, want %v", n, tt.retries)
			}
		})
	}
}

// pooledConn is the one connection ramjet keeps open to addr after its
// requests, reused by all of them.
func pooledConn(t testing.TB, rj *testbed.Ramjet, addr string) testbed.TCPConn {
	t.Helper()
	conns, err := testbed.ConnsTo(rj.Pid(), addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(conns) != 1 || conns[0].State != "ESTABLISHED" {
		t.Fatalf("ramjet's connections to %s after two sequential requests: %+v, want one established", addr, conns)
	}
	return conns[0]
}

// waitClosed waits until conn's end leaves ESTABLISHED and returns it as
// it is then; gone means it was closed by the peer first (CLOSE_WAIT and
// LAST_ACK pass; the TIME_WAIT is the peer's).
func waitClosed(t testing.TB, conn testbed.TCPConn) testbed.TCPConn {
	t.Helper()
	now := conn
	ok := testbed.Poll(15*time.Second, func() bool {
		c, found, err := testbed.TCPConnBetween(conn.Local, conn.Remote)
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			now = testbed.TCPConn{Local: conn.Local, Remote: conn.Remote, State: "gone"}
			return true
		}
		now = c
		return c.State != "ESTABLISHED"
	})
	if !ok {
		t.Fatalf("connection %s -> %s still established after 15 s idle", conn.Local, conn.Remote)
	}
	return now
}
