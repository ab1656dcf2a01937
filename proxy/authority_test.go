package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/purge"
)

// Every spelling of a site's name is the site: routed, keyed and
// forwarded as one; what RFC 9110 does not allow in a Host is refused.
func TestHostSpellingsAreOneName(t *testing.T) {
	for _, c := range []struct {
		host string
		tls  bool
		want string // "" refused
	}{
		{"a.test", false, "a.test"},
		{"A.TEST.", false, "a.test"},
		{"a.test.:80", false, "a.test"},
		{"a.test:0080", false, "a.test"},
		{"a.test:", false, "a.test"},
		{"a.test:443", true, "a.test"},
		{"a.test:443", false, "a.test:443"},
		{"a.test:80", true, "a.test:80"},
		{"a.test:08080", false, "a.test:8080"},
		{"[::1]:80", false, "[::1]"},
		{"[2001:DB8::1]:8080", false, "[2001:db8::1]:8080"},
		{"127.0.0.1:8080", false, "127.0.0.1:8080"},
		{"x@a.test", false, ""},
		{"a.test..", false, ""},
		{".a.test", false, ""},
		{"a..test", false, ""},
		{".", false, ""},
		{"", false, ""},
		{":80", false, ""},
		{"a.test:x", false, ""},
		{"a.test:65536", false, ""},
		{"a.test:80:80", false, ""},
		{"a%2etest", false, ""},
		{"a.test/", false, ""},
		{"a.test\\b", false, ""},
		{"[::1", false, ""},
		{"[::1]x", false, ""},
		{"[v1.x]", false, ""},
		{"[1.2.3.4]", false, ""},
	} {
		got, err := appendHost(nil, []byte(c.host), c.tls)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%q (tls %v): %q, want refused", c.host, c.tls, got)
		case c.want != "" && (err != nil || string(got) != c.want):
			t.Errorf("%q (tls %v): %q, %v; want %q", c.host, c.tls, got, err, c.want)
		}
	}
}

// recording is what a recording origin got, or ramjet computed, for one
// request.
type recording struct {
	host, target string
	body         string
	fields       map[string]string // the fields checkedFields names
	key          string            // ramjet's: the primary key
	site         *site             // ramjet's
}

// checkedFields are fields ramjet keys or decides on, or that a page may
// vary on: what ramjet read must be what the origin gets.
var checkedFields = []string{"Cookie", "X-Device", "Accept-Language", "User-Agent", "Authorization"}

func fieldsOf(h *fasthttp.RequestHeader) map[string]string {
	m := map[string]string{}
	for _, name := range checkedFields {
		if v := h.Peek(name); len(v) > 0 {
			m[name] = string(v)
		}
	}
	return m
}

// differential is ramjet, with sites a.test and b.test, in front of an
// origin that records the requests it gets (and lets ramjet store only
// what is under /cached/); ramjet's computed site and
// key are probed after its key stage. Requests are sent one at a time.
type differential struct {
	p         *Proxy
	addr      string
	mu        sync.Mutex // guards origin and probe
	origin    []recording
	probe     []recording
	originURL string
}

func newDifferential(tb testing.TB) *differential {
	d := &differential{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		h := &ctx.Request.Header
		d.mu.Lock()
		d.origin = append(d.origin, recording{host: string(h.Host()), target: string(h.RequestURI()),
			body: string(ctx.Request.Body()), fields: fieldsOf(h)})
		d.mu.Unlock()
		if bytes.HasPrefix(h.RequestURI(), []byte("/cached/")) {
			ctx.Response.Header.Set("Cache-Control", "public, max-age=60")
		} else {
			ctx.Response.Header.Set("Cache-Control", "no-store")
		}
		ctx.SetBodyString("ok")
	}}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	tb.Cleanup(func() { _ = srv.Shutdown() })
	cfg := testConfig("http://" + ln.Addr().String())
	cfg.Sites = []Site{{Names: []string{"a.test"}, Cache: true}, {Names: []string{"b.test", "*.b.test"}, Cache: true}}
	d.p = newTestProxy(tb, cfg, nil)
	d.p.steps = newSteps(insertStage(pipeline(), "lookup", stage{name: "probe", run: func(r *request) verdict {
		h := r.header()
		d.mu.Lock()
		d.probe = append(d.probe, recording{host: string(h.Host()), target: string(h.RequestURI()),
			fields: fieldsOf(h), key: string(r.key), site: r.s})
		d.mu.Unlock()
		return proceed
	}}))
	proxySrv := NewServer(ServerConfig{Name: "test", Addr: "127.0.0.1:0"}, d.p.ServeFastHTTP, discardLog)
	if err := proxySrv.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = proxySrv.Shutdown(ctx)
	})
	d.addr = proxySrv.Addr().String()
	return d
}

// exchange sends raw on a connection of its own and returns the answer's
// status (0: none, the connection was closed) and what the origin and
// the probe recorded.
func (d *differential) exchange(tb testing.TB, raw string) (int, []recording, []recording) {
	d.mu.Lock()
	d.origin, d.probe = nil, nil
	d.mu.Unlock()
	c, err := net.Dial("tcp", d.addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(raw)); err != nil {
		tb.Fatal(err)
	}
	var resp fasthttp.Response
	resp.SkipBody = strings.HasPrefix(raw, "HEAD ")
	status := 0
	if resp.Read(bufio.NewReader(c)) == nil {
		status = resp.StatusCode()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return status, d.origin, d.probe
}

// check is the property: a request ramjet answers from the origin was
// routed, keyed and read as the origin got it; one it refuses never
// reached the origin.
func (d *differential) check(t *testing.T, raw, body string) {
	status, origin, probe := d.exchange(t, raw)
	if status != fasthttp.StatusOK {
		if len(origin) > 0 {
			t.Fatalf("%q: answered %d, yet the origin got %+v", raw, status, origin)
		}
		return
	}
	if len(origin) == 0 {
		return // ramjet's own answer (PURGE)
	}
	if len(origin) != 1 || len(probe) != 1 {
		t.Fatalf("%q: origin got %d requests, ramjet probed %d: want one of each", raw, len(origin), len(probe))
	}
	o, r := origin[0], probe[0]
	g := d.p.gen.Load()
	if site := g.router.route([]byte(o.host)); site != r.site {
		t.Errorf("%q: ramjet routed to %q, the origin's Host %q routes to %q", raw, siteLabel(r.site), o.host, siteLabel(site))
	}
	if o.host != r.host {
		t.Errorf("%q: ramjet read Host %q, the origin got %q", raw, r.host, o.host)
	}
	var req fasthttp.Request
	req.Header.SetRequestURI(o.target)
	req.Header.SetHost(o.host)
	tg := target{scheme: []byte("http"), host: []byte(o.host)}
	tg.path, tg.query = splitTarget(&req)
	var params [][]byte
	if want := appendKey(nil, &params, &tg, keyDrop{site: r.site.drop}); string(want) != r.key {
		t.Errorf("%q: ramjet keyed %q, the origin's request (Host %q, target %q) is %q", raw, r.key, o.host, o.target, want)
	}
	// A GET's or HEAD's body is not forwarded by a fill (fill.go's
	// concern); any other method's reaches the origin whole.
	if m, _, _ := strings.Cut(raw, " "); m != "GET" && m != "HEAD" && o.body != body {
		t.Errorf("%q: the origin got body %q, want %q", raw, o.body, body)
	}
	for _, name := range checkedFields {
		if o.fields[name] != r.fields[name] {
			t.Errorf("%q: ramjet read %s %q, the origin got %q", raw, name, r.fields[name], o.fields[name])
		}
	}
}

// FuzzProxyKeysWhatTheOriginGets: for any request line, header and body
// (the target in every form, the host in every spelling, a Connection
// list, more fields, duplicate ones), the site and key ramjet computes,
// and the fields it keys on, are what the origin gets (and the body, but
// a GET's), or ramjet refuses the request. The
// seeds (testdata/fuzz) cover the cases issue 27 names.
func FuzzProxyKeysWhatTheOriginGets(f *testing.F) {
	f.Add("GET", "/page?b=2&a=1", "a.test", "", "", "")
	d := newDifferential(f)
	f.Fuzz(func(t *testing.T, method, target, host, connection, extra, body string) {
		if !validLine(method, target, host, connection) || strings.ContainsAny(extra, "\r") {
			t.Skip()
		}
		var b strings.Builder
		b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n")
		if connection != "" {
			b.WriteString("Connection: " + connection + "\r\n")
		}
		for line := range strings.SplitSeq(extra, "\n") {
			if line != "" {
				b.WriteString(line + "\r\n")
			}
		}
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
		d.check(t, b.String(), body)
	})
}

// validLine reports whether the parts can make one request line and its
// header fields (no line breaks; a method and target without spaces).
func validLine(method, target, host, connection string) bool {
	return method != "" && !strings.ContainsAny(method, " \r\n\t") && target != "" && !strings.ContainsAny(target, " \r\n\t") &&
		!strings.ContainsAny(host+connection, "\r\n")
}

// An absolute-form target names the site: the origin gets its authority
// as Host and an origin-form target, whatever the Host field said.
func TestAbsoluteTargetIsTheRequestsSite(t *testing.T) {
	d := newDifferential(t)
	for _, target := range []string{"http://b.test/page?x=1", "HTTPS://B.TEST:443/page?x=1", "hTtP://b.test./page?x=1", "http://b.test:80/page?x=1"} {
		status, origin, probe := d.exchange(t, "GET "+target+" HTTP/1.1\r\nHost: a.test\r\n\r\n")
		if status != 200 || len(origin) != 1 {
			t.Fatalf("%s: status %d, origin got %d requests", target, status, len(origin))
		}
		if o := origin[0]; o.host != "b.test" || o.target != "/page?x=1" {
			t.Errorf("%s: the origin got Host %q target %q, want b.test /page?x=1", target, o.host, o.target)
		}
		if probe[0].site.scope != "b.test" || probe[0].key != "http://b.test/page?x=1" {
			t.Errorf("%s: ramjet routed to %q with key %q, want b.test's http://b.test/page?x=1", target, probe[0].site.scope, probe[0].key)
		}
	}
	for _, target := range []string{"ftp://b.test/", "http://x@b.test/", "http:///page", "b.test:80"} {
		if status, origin, _ := d.exchange(t, "GET "+target+" HTTP/1.1\r\nHost: a.test\r\n\r\n"); status != 400 || len(origin) > 0 {
			t.Errorf("%s: status %d, origin got %d requests; want 400 and none", target, status, len(origin))
		}
	}
}

// A client's Connection list removes neither Host nor what ramjet keys
// or sets; what else it names is gone before ramjet reads the request.
func TestConnectionListKeepsWhatRamjetNeeds(t *testing.T) {
	d := newDifferential(t)
	status, origin, probe := d.exchange(t, "GET /c HTTP/1.1\r\nHost: a.test\r\nConnection: Host, Cookie, X-Forwarded-Host, X-Device\r\n"+
		"Cookie: lang=fr\r\nX-Device: mobile\r\nX-Forwarded-Host: evil.test\r\n\r\n")
	if status != 200 || len(origin) != 1 {
		t.Fatalf("status %d, origin got %d requests", status, len(origin))
	}
	o := origin[0]
	if o.host != "a.test" || o.fields["Cookie"] != "lang=fr" {
		t.Errorf("the origin got Host %q Cookie %q, want a.test and lang=fr", o.host, o.fields["Cookie"])
	}
	if o.fields["X-Device"] != "" || probe[0].fields["X-Device"] != "" {
		t.Errorf("X-Device: ramjet read %q, the origin got %q; want it gone for both", probe[0].fields["X-Device"], o.fields["X-Device"])
	}
}

// RFC 9112 6.1: a request framed by both Content-Length and
// Transfer-Encoding is answered, and its connection closed.
func TestBothLengthsCloseTheConnection(t *testing.T) {
	d := newDifferential(t)
	c, err := net.Dial("tcp", d.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Write([]byte("POST /both HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
		"GET /next HTTP/1.1\r\nHost: a.test\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var resp fasthttp.Response
	if err := resp.Read(br); err != nil {
		t.Fatal(err)
	}
	if !resp.ConnectionClose() {
		t.Errorf("answer %d without Connection: close", resp.StatusCode())
	}
	if rest, _ := br.ReadBytes(0); len(bytes.TrimSpace(rest)) > 0 {
		t.Errorf("the connection answered on after the ambiguous request: %.80q", rest)
	}
}

// A purge command's host, and the admin API's check of a site token,
// read a host as a request's Host is read: "A.TEST.:80" is a.test.
func TestPurgeHostsAreReadAsRequestsHosts(t *testing.T) {
	d := newDifferential(t)
	for _, host := range []string{"A.TEST.", "a.test.:80", "a.test"} {
		if got := d.p.ScopeOf(host); got != "a.test" {
			t.Errorf("ScopeOf(%q) = %q, want a.test", host, got)
		}
	}
	for i, cmdHost := range []string{"A.TEST.", "a.test.:80"} {
		for _, site := range []string{"", "a.test"} { // the operator's, a site token's
			path := fmt.Sprintf("/cached/purged-%d-%s", i, site)
			d.exchange(t, "GET "+path+" HTTP/1.1\r\nHost: a.test\r\n\r\n")
			res := d.p.Purge(purge.Command{Host: cmdHost, Site: site, Targets: []purge.Target{{Kind: purge.KindURL, Value: path}}})
			if res.URLs == 0 {
				t.Errorf("purge of %s with host %q (site %q): %+v, want the stored page purged", path, cmdHost, site, res)
			}
		}
	}
}

// isNormalHost says yes exactly when appendHost would write the host as
// it is: the fast path never skips a rewrite or a refusal.
func FuzzNormalHostAgreesWithAppendHost(f *testing.F) {
	for _, h := range []string{"a.test", "A.test", "a.test.", "a.test:80", "a.test:443", "a.test:8080", "a.test:08080",
		"127.0.0.1:51470", "[::1]:80", "x@a.test", "a..test", ".a", "a.test:", "a.test:99999", "a_b~c-d", ""} {
		f.Add(h, false)
		f.Add(h, true)
	}
	f.Fuzz(func(t *testing.T, host string, tls bool) {
		norm, err := appendHost(nil, []byte(host), tls)
		same := err == nil && string(norm) == host
		if got := isNormalHost([]byte(host), tls); got && !same {
			t.Fatalf("isNormalHost(%q, %v) = true, but appendHost gives %q, %v", host, tls, norm, err)
		}
	})
}

// An ESI include resolves its host with normalHost on every hit of its
// page: a host already normal is returned as it is, without a copy.
func TestNormalHostAllocatesNothingForANormalHost(t *testing.T) {
	var got string
	if n := testing.AllocsPerRun(100, func() { got = normalHost("a.test:8080") }); n != 0 || got != "a.test:8080" {
		t.Errorf("normalHost(a.test:8080) = %q with %v allocations, want it as it is with none", got, n)
	}
	if got := normalHost("A.Test.:80"); got != "a.test" {
		t.Errorf("normalHost(A.Test.:80) = %q, want a.test", got)
	}
}
