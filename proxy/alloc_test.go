//go:build !race

package proxy

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
)

// TestHitDoesNotAllocate serves a stored page, identity and gzip, through
// the whole handler and counts allocations, without an access log and
// with one in each format.
func TestHitDoesNotAllocate(t *testing.T) {
	eachLog(t, lscacheConfig(newTestOrigin(t, allocOrigin).URL), hitAllocs)
}

// allocOrigin answers /mine privately and everything else cacheable.
func allocOrigin(w http.ResponseWriter, r *http.Request) {
	{
		if r.URL.Path == "/mine" {
			w.Header().Set("X-LiteSpeed-Cache-Control", "private,max-age=600")
			w.Write([]byte("private page"))
			return
		}
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("X-LiteSpeed-Tag", "a,b")
		w.Write([]byte(strings.Repeat("<p>hello</p>", 200)))
	}
}

// eachLog runs test on cfg without an access log, then with one in each
// format.
func eachLog(t *testing.T, cfg Config, test func(*testing.T, Config)) {
	for _, f := range []accesslog.Format{0, accesslog.Combined, accesslog.Ramjet, accesslog.JSON} {
		name := "no access log"
		if f != 0 {
			name = "access log " + f.String()
		}
		t.Run(name, func(t *testing.T) {
			c := cfg
			if f != 0 {
				c.Default.AccessLog = AccessLog{Path: filepath.Join(t.TempDir(), "access.log"), Format: f}
			}
			test(t, c)
		})
	}
}

// hitAllocs counts the allocations of hits under cfg: identity, gzip,
// br, and with a session that makes the private cache be looked in.
func hitAllocs(t *testing.T, cfg Config) {
	p, base := startProxy(t, cfg)
	get(t, base+"/page?b=1&a=2")
	// A private entry makes every request with a session compute its
	// identity and look in the private cache first.
	get(t, base+"/mine", "Cookie", "session=1")
	if p.private.Len() == 0 {
		t.Fatal("private page not stored")
	}

	tests := []struct{ name, acceptEncoding, cookie string }{
		{"identity", "", ""},
		{"gzip", "gzip, deflate", ""},
		{"br with cookies", "gzip, br", "a=1; _lscache_vary=x"},
		{"session cookie checks the private cache first", "", "session=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req fasthttp.Request
			req.SetRequestURI("/page?a=2&b=1&utm_campaign=z")
			req.Header.SetHost(strings.TrimPrefix(base, "http://"))
			if tt.acceptEncoding != "" {
				req.Header.Set("Accept-Encoding", tt.acceptEncoding)
			}
			if tt.cookie != "" {
				req.Header.Set("Cookie", tt.cookie)
			}
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
			serve := func() {
				ctx.Response.Reset()
				p.ServeFastHTTP(&ctx)
			}
			serve()
			if cs := string(ctx.Response.Header.Peek("Cache-Status")); cs != "ramjet; hit" && tt.cookie == "" {
				t.Fatalf("not a hit: %q", cs)
			}
			if ls := peekLSCache(&ctx.Response.Header); cfg.Default.LSCacheHeader && ls != "hit" && tt.cookie == "" {
				t.Fatalf("X-LiteSpeed-Cache %q on a hit", ls)
			}
			if n := testing.AllocsPerRun(200, serve); n != 0 {
				t.Fatalf("hit allocates %v times, want 0", n)
			}
		})
	}
}

// TestTLSHitWithHSTSDoesNotAllocate serves a stored page over TLS to a
// site that adds Strict-Transport-Security.
func TestTLSHitWithHSTSDoesNotAllocate(t *testing.T) {
	p := httpsTestProxy(t, 443)
	ctx := requestCtx("GET", "secure.test", "/page", true)
	serve := func() {
		ctx.Response.Reset()
		p.ServeFastHTTP(ctx)
	}
	serve()
	serve()
	if cs := string(ctx.Response.Header.Peek("Cache-Status")); cs != "ramjet; hit" {
		t.Fatalf("not a hit: %q", cs)
	}
	if hsts := ctx.Response.Header.Peek("Strict-Transport-Security"); len(hsts) == 0 {
		t.Fatal("no Strict-Transport-Security on the hit")
	}
	if n := testing.AllocsPerRun(200, serve); n != 0 {
		t.Fatalf("TLS hit with HSTS allocates %v times, want 0", n)
	}
}

// TestHitBehindTrustedProxyDoesNotAllocate: with real_ip on, finding the
// client in X-Forwarded-For (over two header lines, IPv4 and IPv6, past
// a trusted hop), setting it as ctx's remote address and keying the
// private cache on it cost a hit nothing, inline or not.
func TestHitBehindTrustedProxyDoesNotAllocate(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		w.Write([]byte(strings.Repeat("<p>hello</p>", 200)))
	})
	cfg := testConfig(o.URL)
	cfg.RealIP.From = mustPrefixes(t, "127.0.0.1/32", "10.0.0.0/8")
	p, base := startProxy(t, cfg)
	get(t, base+"/page")
	tests := []struct {
		name, xff, cookie string
		want              string // the client stageClient found
	}{
		{"IPv4 client", "198.51.100.7, 203.0.113.5|10.0.0.1", "", "203.0.113.5"},
		{"IPv6 client with a session", "[2001:db8::5]:443", "session=1", "2001:db8::5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, inline := range []bool{false, true} {
				ctx := requestCtx("GET", strings.TrimPrefix(base, "http://"), "/page", false)
				for _, line := range strings.Split(tt.xff, "|") {
					ctx.Request.Header.Add("X-Forwarded-For", line)
				}
				if tt.cookie != "" {
					ctx.Request.Header.Set("Cookie", tt.cookie)
				}
				var seen [16]byte // remoteIP is valid until release
				probe := func(r *request) verdict { copy(seen[:], r.remoteIP()); return proceed }
				p.steps = newSteps(insertStage(pipeline(), "admit", stage{name: "probe", run: probe}))
				serve := func() {
					ctx.Response.Reset()
					if inline {
						if !p.ServeHit(ctx) {
							t.Fatal("not an inline hit")
						}
						return
					}
					p.ServeFastHTTP(ctx)
				}
				serve()
				if cs := string(ctx.Response.Header.Peek("Cache-Status")); cs != "ramjet; hit" {
					t.Fatalf("not a hit: %q", cs)
				}
				if got := net.IP(seen[:]).String(); got != tt.want {
					t.Fatalf("client %v, want %s", got, tt.want)
				}
				if n := testing.AllocsPerRun(200, serve); n != 0 {
					t.Fatalf("hit (inline %v) allocates %v times, want 0", inline, n)
				}
			}
		})
	}
}

// TestHitDoesNotAllocateWithTheWAFOn: a site in block mode serves its
// hits as a site without the WAF does: the rules never run on them.
func TestHitDoesNotAllocateWithTheWAFOn(t *testing.T) {
	cfg := lscacheConfig(newTestOrigin(t, allocOrigin).URL)
	cfg.Default.WAF = testWAF(t, WAFBlock)
	eachLog(t, cfg, hitAllocs)
}
