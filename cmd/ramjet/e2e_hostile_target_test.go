package main_test

// End-to-end tests of issue 27's request-target items through the built
// binary: what the cache keys is what the origin sees. An absolute-form
// target, a Host spelled otherwise, a Connection list naming Host or a
// field the page varies on: ramjet routes, keys and applies policy to the
// request as the origin gets it, or refuses it.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// hostileSitesYAML: a.test blocks attacks with the WAF; b.test does not.
const hostileSitesYAML = `hosts:
  - names: [a.test]
    waf: {mode: block}
  - names: [b.test]
`

// vhostNginx maps $host as nginx's virtual hosts would (its $host is the
// request line's authority, else the Host field, lower case, without a
// port or a trailing dot) and answers /vh/ with the site it chose, from
// a cacheable page.
const (
	vhostHTTP = `	map $host $vhost {
		a.test A;
		b.test B;
		default DEFAULT;
	}
`
	vhostServer = `		location /vh/ {
			add_header Cache-Control "public, max-age=300";
			return 200 "vhost=$vhost request_id=$request_id\n";
		}
`
)

// rawAnswer is one answer read off a raw connection.
type rawAnswer struct {
	status int
	header http.Header
	body   string
	closed bool // the server closed the connection after it
}

// exchangeRaw sends raw to addr on a connection of its own and reads one
// answer.
func exchangeRaw(t testing.TB, addr, raw string) rawAnswer {
	t.Helper()
	return exchangeRawWaiting(t, addr, raw, 2*time.Second)
}

// exchangeRawWaiting is exchangeRaw waiting up to closing for the server
// to close the connection after its answer.
func exchangeRawWaiting(t testing.TB, addr, raw string, closing time.Duration) rawAnswer {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	method, _, _ := strings.Cut(raw, " ")
	resp, err := http.ReadResponse(br, &http.Request{Method: method}) // a HEAD's answer has no body
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%q: body: %v", raw, err)
	}
	a := rawAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
	_ = c.SetReadDeadline(time.Now().Add(closing))
	_, err = br.ReadByte()
	a.closed = err == io.EOF
	return a
}

func vhostOf(a rawAnswer) string {
	v, _, _ := strings.Cut(strings.TrimPrefix(a.body, "vhost="), " ")
	return v
}

func startVhostRamjet(t *testing.T) (*origin, string) {
	t.Helper()
	o := startOriginWith(t, vhostHTTP, vhostServer)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", hostileSitesYAML))
	return o, rj.Addr
}

// An absolute-form target names the request's site (RFC 9112 3.2.2):
// b.test's page is stored as b.test's, never under the Host field's
// a.test, whatever the scheme's case or port; a target ramjet cannot
// route is refused.
func TestAbsoluteTargetIsItsAuthoritysPage(t *testing.T) {
	t.Parallel()
	_, addr := startVhostRamjet(t)
	for i, target := range []string{"http://b.test/vh/abs", "HTTPS://B.TEST:443/vh/abs-tls", "hTtP://b.test.:80/vh/abs-port"} {
		path := target[strings.Index(target, "/vh/"):]
		first := exchangeRaw(t, addr, "GET "+target+" HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
		if first.status != 200 || vhostOf(first) != "B" {
			t.Fatalf("%d %s with Host a.test: %d %q, want b.test's page", i, target, first.status, first.body)
		}
		a := exchangeRaw(t, addr, "GET "+path+" HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
		if vhostOf(a) != "A" {
			t.Errorf("a.test%s after %s: %q (Cache-Status %q), want a.test's own page", path, target, a.body, a.header.Get("Cache-Status"))
		}
		b := exchangeRaw(t, addr, "GET "+path+" HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n")
		if b.body != first.body {
			t.Errorf("b.test%s after %s: %q, want the stored answer %q", path, target, b.body, first.body)
		}
	}
	for _, target := range []string{"ftp://b.test/vh/x", "http://user@b.test/vh/x", "http:///vh/x"} {
		if a := exchangeRaw(t, addr, "GET "+target+" HTTP/1.1\r\nHost: a.test\r\n\r\n"); a.status != 400 || !a.closed {
			t.Errorf("%s: %d (closed %v) %q, want 400 and the connection closed", target, a.status, a.closed, a.body)
		}
	}
}

// A client listing Host in Connection does not have the origin answer
// from its default virtual host under a.test's URL.
func TestConnectionListKeepsTheHost(t *testing.T) {
	t.Parallel()
	_, addr := startVhostRamjet(t)
	for _, list := range []string{"Host", "close, Host", "X-Forwarded-Host, Host"} {
		path := "/vh/conn-" + strings.NewReplacer(",", "", " ", "-").Replace(list)
		first := exchangeRaw(t, addr, "GET "+path+" HTTP/1.1\r\nHost: a.test\r\nConnection: "+list+"\r\n\r\n")
		if vhostOf(first) != "A" {
			t.Errorf("Connection: %s: %d %q, want a.test's page", list, first.status, first.body)
		}
		if again := exchangeRaw(t, addr, "GET "+path+" HTTP/1.1\r\nHost: a.test\r\n\r\n"); vhostOf(again) != "A" {
			t.Errorf("a.test%s after Connection: %s: %q, want a.test's page", path, list, again.body)
		}
	}
}

// Every spelling of a.test is a.test, with its WAF; a Host RFC 9110
// does not allow is refused.
func TestHostSpellingsKeepTheSitesPolicy(t *testing.T) {
	t.Parallel()
	o, addr := startVhostRamjet(t)
	xss := "?q=%3Cscript%3Ealert(document.cookie)%3C%2Fscript%3E"
	for i, host := range []string{"a.test", "A.TEST.", "a.test.:80", "a.test:0080"} {
		path := fmt.Sprintf("/vh/xss-%d", i)
		if a := exchangeRaw(t, addr, "GET "+path+xss+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); a.status != http.StatusForbidden {
			t.Errorf("Host %q with an XSS payload: %d %q, want a.test's WAF to block it (403)", host, a.status, a.body)
		}
		page := fmt.Sprintf("/vh/page-%d", i)
		first := exchangeRaw(t, addr, "GET "+page+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		if again := exchangeRaw(t, addr, "GET "+page+" HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n"); vhostOf(first) != "A" || again.body != first.body {
			t.Errorf("Host %q: %q, then a.test: %q; want a.test's page, stored once for both", host, first.body, again.body)
		}
	}
	for _, host := range []string{"x@a.test", "a..test", "a.test:http", "a.test:99999", "a.test/x"} {
		if a := exchangeRaw(t, addr, "GET /vh/bad HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); a.status != 400 {
			t.Errorf("Host %q: %d %q, want 400", host, a.status, a.body)
		}
	}
	if n := o.loggedRequests(t, "/vh/bad"); n != 0 {
		t.Errorf("the origin got %d refused requests", n)
	}
}

// A request framed by both Content-Length and Transfer-Encoding is
// answered, then its connection closed (RFC 9112 6.1).
func TestBothLengthsCloseTheConnectionAfterTheAnswer(t *testing.T) {
	t.Parallel()
	_, addr := startVhostRamjet(t)
	a := exchangeRaw(t, addr, "POST /vh/both HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	if !a.closed {
		t.Errorf("answer %d: the connection stayed open", a.status)
	}
}

// recordingOrigin answers every request with what it got (Host, target,
// X-Device) and a unique id, cacheable, varying on X-Device.
type recordingOrigin struct {
	*httptest.Server
	n atomic.Int64
}

func startRecordingOrigin(t *testing.T) *recordingOrigin {
	o := &recordingOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Vary", "X-Device")
		fmt.Fprintf(w, "host=%s\ntarget=%s\nx-device=%s\nid=%d\n", r.Host, r.RequestURI, r.Header.Get("X-Device"), o.n.Add(1))
	}))
	t.Cleanup(o.Close)
	return o
}

// A differential through the binary: for hostile request lines and
// headers, the answer ramjet stored is found again by the plain request
// of what the origin got (its Host, target and X-Device): ramjet keyed the
// request as the origin saw it. A request it refuses is answered 400.
func TestStoredUnderWhatTheOriginGot(t *testing.T) {
	t.Parallel()
	o := startRecordingOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", hostileSitesYAML))
	requests := []string{
		"GET http://b.test/d1 HTTP/1.1\r\nHost: a.test\r\n",
		"GET HTTPS://B.test:443/d2?b=2&a=1 HTTP/1.1\r\nHost: a.test\r\n",
		"GET http://b.test?d3 HTTP/1.1\r\nHost: a.test\r\n",
		"GET //x/d4?u=http://b.test/ HTTP/1.1\r\nHost: a.test\r\n",
		"GET /d5 HTTP/1.1\r\nHost: A.TEST.\r\n",
		"GET /d6 HTTP/1.1\r\nHost: a.test.:80\r\n",
		"GET /d7 HTTP/1.1\r\nHost: a.test\r\nConnection: Host\r\n",
		"GET /d8 HTTP/1.1\r\nHost: a.test\r\nConnection: X-Device\r\nX-Device: mobile\r\n",
		"GET /d9 HTTP/1.1\r\nHost: a.test\r\nConnection: keep-alive\r\nConnection: X-Device\r\nX-Device: mobile\r\n",
		"GET /d10 HTTP/1.1\r\nHost: www.b.test:8080\r\nX-Device: tablet\r\n",
	}
	for _, req := range requests {
		first := exchangeRaw(t, rj.Addr, req+"Connection: close\r\n\r\n")
		if first.status == http.StatusBadRequest {
			continue
		}
		seen := map[string]string{}
		for line := range strings.SplitSeq(first.body, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				seen[k] = v
			}
		}
		plain := "GET " + seen["target"] + " HTTP/1.1\r\nHost: " + seen["host"] + "\r\n"
		if d := seen["x-device"]; d != "" {
			plain += "X-Device: " + d + "\r\n"
		}
		again := exchangeRaw(t, rj.Addr, plain+"Connection: close\r\n\r\n")
		if again.body != first.body {
			t.Errorf("%q answered %d %q;\nthe origin's view of it %q answered %q (Cache-Status %q): want the stored answer",
				req, first.status, first.body, plain, again.body, again.header.Get("Cache-Status"))
		}
	}
}

// HTTP/2's and HTTP/3's :authority is normalised in the same stage as
// HTTP/1.1's Host: "A.TEST." is a.test, with its WAF and its stored
// pages; an HTTP/3 host field that disagrees with :authority resets the
// stream (RFC 9114 4.3.1).
func TestAuthoritySpellingsKeepTheSitesPolicyOverH2AndH3(t *testing.T) {
	t.Parallel()
	o := startOriginWith(t, vhostHTTP, vhostServer)
	rj := startH3Ramjet(t, newPKI(t), o.URL, "--config", testbed.WriteConfig(t, "", hostileSitesYAML))
	clients := map[string]*http.Client{"h2": rj.client(t, "h2"), "h3": rj.h3Client(t, nil)}
	for _, proto := range []string{"h2", "h3"} {
		c := clients[proto]
		xss := rj.HTTPS("localhost", "/vh/xss-"+proto+"?q=%3Cscript%3Ealert(document.cookie)%3C%2Fscript%3E")
		if r := get(t, c, xss, "Host: A.TEST."); r.Status != http.StatusForbidden {
			t.Errorf("%s :authority A.TEST. with an XSS payload: %d %q, want a.test's WAF to block it (403)", proto, r.Status, r.Body)
		}
		page := rj.HTTPS("localhost", "/vh/page-"+proto)
		first := get(t, c, page, "Host: A.TEST.")
		again := get(t, c, page, "Host: a.test")
		if !strings.HasPrefix(string(first.Body), "vhost=A ") || string(again.Body) != string(first.Body) {
			t.Errorf("%s :authority A.TEST.: %q, then a.test: %q; want a.test's page, stored once for both", proto, first.Body, again.Body)
		}
	}
	raw := dialRawH3(t, rj.TLSAddr, rj.pki)
	if status, body, err := rawResponse(raw.get(t, "/vh/disagree", qpack.HeaderField{Name: "host", Value: "b.test"})); err == nil {
		t.Errorf("h3 :authority localhost with host b.test: %s %q, want the stream reset", status, body)
	}
	if f := h2Disagreeing(t, rj); f == nil || f.Header().Type != http2.FrameRSTStream {
		t.Errorf("h2 :authority localhost with host b.test: answered with %v, want the stream reset", f)
	}
}

// h2Disagreeing sends an HTTP/2 GET whose host field disagrees with its
// :authority and returns the server's first frame on that stream.
func h2Disagreeing(t *testing.T, rj *tlsRamjet) http2.Frame {
	t.Helper()
	c := openH2(t, rj)
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: "/vh/disagree-h2"}, {Name: "host", Value: "b.test"}} {
		_ = enc.WriteField(f) // to memory
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true, EndStream: true}); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return nil
		}
		if f.Header().StreamID == 1 {
			return f
		}
	}
}

// A site's .htaccess refusals (proxy mode: the LiteSpeed plugin's deny
// of its debug log) hold for every spelling of its name.
func TestHostSpellingsKeepTheSitesHtaccessDenies(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	root := testbed.PublicDir(t)
	write(t, filepath.Join(root, ".htaccess"), "<IfModule LiteSpeed>\nRewriteEngine on\nRewriteRule litespeed/debug/.*\\.log$ - [F,L]\n</IfModule>\n")
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", fmt.Sprintf("hosts:\n  - names: [a.test]\n    htaccess_root: %q\n", root)))
	for _, host := range []string{"a.test", "A.TEST.", "a.test.:80", "a.test:080"} {
		if a := exchangeRaw(t, rj.Addr, "GET /wp-content/litespeed/debug/debug.log HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); a.status != http.StatusForbidden {
			t.Errorf("Host %q: the plugin's debug log answered %d, want a.test's .htaccess to refuse it (403)", host, a.status)
		}
	}
	if n := o.loggedRequests(t, "/wp-content/litespeed/debug/debug.log"); n != 0 {
		t.Errorf("the origin got %d requests for the debug log", n)
	}
}

// A purge names its host as a client may spell it: a site token's purge
// of a URL on "A.TEST." is a.test's, and purges a.test's page.
func TestPurgeCommandReadsTheHostAsRequestsDo(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", sitesYAML))
	c, ns := newClient(t), nsFor(t)
	ids := cacheTenantPages(t, c, rj, ns)
	code, out, res, err := runPurgeCLI(t, "--admin", rj.AdminURL, "--token", tokenA, "--url", tenantPages["post"].uri(ns), "--host", "A.TEST.")
	if code != 0 || err != nil || res.URLs == 0 {
		t.Fatalf("ramjet purge --host A.TEST. with a.test's token: exit %d, %+v (%v); output:\n%s", code, res, err, out)
	}
	checkTenantFates(t, c, rj, ns, ids, "a.test/post", "www.a.test/post")
}
