package proxy

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// inlineOrigin serves what TestServeHit needs: a cacheable page with
// validators, a short-lived one, an ESI page, an uncacheable one and a
// private one.
func inlineOrigin(t *testing.T) *testOrigin {
	return newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/short":
			w.Header().Set("Cache-Control", "max-age=1")
		case "/esi":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			w.Write([]byte(`<p>a</p><esi:include src="/frag"/>`))
			return
		case "/nocache":
			w.Header().Set("Cache-Control", "no-store")
		case "/mine":
			w.Header().Set("X-LiteSpeed-Cache-Control", "private,max-age=600")
		default:
			w.Header().Set("Cache-Control", "max-age=600")
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Type", "text/html")
		}
		w.Write([]byte(strings.Repeat("<p>page "+r.URL.Path+"</p>", 20)))
	})
}

// ServeHit answers a fresh hit (the user's private copy included) exactly
// as ServeFastHTTP does, and leaves
// everything else to it untouched: no response, no origin request, no
// cache change.
func TestServeHitMatchesHandlerOrDeclines(t *testing.T) {
	o := inlineOrigin(t)
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	clock := newTestClock()
	p := newTestProxy(t, cfg, clock.Now)
	base := serveProxy(t, p)
	host := strings.TrimPrefix(base, "http://")
	get(t, base+"/short")
	clock.Advance(1100 * time.Millisecond) // /short goes stale; the others are stored after
	for _, path := range []string{"/page", "/esi", "/nocache", "/nocache"} {
		get(t, base+path)
	}
	get(t, base+"/mine", "Cookie", "session=1")
	tests := []struct {
		name, method, path string
		hdr                []string
		hit                bool
	}{
		{"fresh hit", "GET", "/page", nil, true},
		{"HEAD", "HEAD", "/page", nil, true},
		{"gzip", "GET", "/page", []string{"Accept-Encoding", "gzip"}, true},
		{"conditional", "GET", "/page", []string{"If-None-Match", `"v1"`}, true},
		{"tracking parameters dropped", "GET", "/page?utm_source=x", nil, true},
		{"miss", "GET", "/other", nil, false},
		{"stale", "GET", "/short", nil, false},
		{"ESI page", "GET", "/esi", nil, false},
		{"hit-for-pass", "GET", "/nocache", nil, false},
		{"POST", "POST", "/page", nil, false},
		{"credentials and a copy not said to be shared", "GET", "/page", []string{"Authorization", "Basic eDp5"}, false},
		{"logged-in cookie", "GET", "/page", []string{"Cookie", "wordpress_logged_in_1=x"}, false},
		{"session without a private copy of the page", "GET", "/page", []string{"Cookie", "session=1"}, true},
		{"the user's own private copy", "GET", "/mine", []string{"Cookie", "session=1"}, true},
		{"another user's private page", "GET", "/mine", []string{"Cookie", "session=2"}, false},
		{"PURGE from a trusted client", "PURGE", "/page", nil, false},
		{"REFRESH from a trusted client", "REFRESH", "/page", nil, false},
		{"still fresh after the declined purges", "GET", "/page", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := func() *fasthttp.RequestCtx {
				ctx := requestCtx(tt.method, host, tt.path, false)
				for i := 0; i+1 < len(tt.hdr); i += 2 {
					ctx.Request.Header.Set(tt.hdr[i], tt.hdr[i+1])
				}
				return ctx
			}
			hits, entries := o.hits.Load(), p.cache.Len()
			inline := build()
			if got := p.ServeHit(inline); got != tt.hit {
				t.Fatalf("ServeHit = %v, want %v", got, tt.hit)
			}
			if !tt.hit {
				if inline.Response.String() != build().Response.String() {
					t.Errorf("declined, but the response was touched:\n%s", inline.Response.String())
				}
				if o.hits.Load() != hits || p.cache.Len() != entries {
					t.Errorf("declined, but the origin or the cache was used")
				}
				return
			}
			full := build()
			p.ServeFastHTTP(full)
			if a, b := inline.Response.String(), full.Response.String(); a != b {
				t.Errorf("ServeHit and ServeFastHTTP differ:\n%s\n---\n%s", a, b)
			}
			if cs := inline.Response.Header.Peek("Cache-Status"); !bytes.Equal(cs, csHit) && !bytes.Equal(cs, csHitPrivate) {
				t.Errorf("Cache-Status %q", cs)
			}
		})
	}
}

// Over TLS the hit carries the site's HSTS, as from ServeFastHTTP; a
// plain request for a site that redirects to HTTPS is declined.
func TestServeHitHSTSAndRedirect(t *testing.T) {
	p := httpsTestProxy(t, 443)
	warm := requestCtx("GET", "secure.test", "/page", true)
	p.ServeFastHTTP(warm)
	ctx := requestCtx("GET", "secure.test", "/page", true)
	if !p.ServeHit(ctx) {
		t.Fatal("TLS hit declined")
	}
	if hsts := ctx.Response.Header.Peek("Strict-Transport-Security"); len(hsts) == 0 {
		t.Error("no Strict-Transport-Security on the inline hit")
	}
	if p.ServeHit(requestCtx("GET", "secure.test", "/page", false)) {
		t.Error("plain request for an HTTPS-redirect site answered inline")
	}
}
