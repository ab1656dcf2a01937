package proxy

import (
	"bytes"
	"compress/gzip"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/waf"
)

var testRuleSet = sync.OnceValues(func() (*waf.Set, error) { return waf.NewLibrary().Get(waf.Rules{}) })

// testWAF is a WAF policy in mode with the CRS at paranoia 1.
func testWAF(t testing.TB, mode WAFMode) WAF {
	t.Helper()
	set, err := testRuleSet()
	if err != nil {
		t.Fatal(err)
	}
	return WAF{Mode: mode, Rules: set}
}

// TestGuardStopsAnAttackBeforeTheOrigin: in block mode the origin never
// sees a stopped request, and the site's status and page answer it; a
// fragment-free page passes and is counted.
func TestGuardStopsAnAttackBeforeTheOrigin(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		w.Write([]byte("ok"))
	})
	cfg := testConfig(o.URL)
	cfg.Default.WAF = testWAF(t, WAFBlock)
	cfg.Default.WAF.Status, cfg.Default.WAF.Page = 406, []byte("no thanks")
	p, base := startProxy(t, cfg)
	host := strings.TrimPrefix(base, "http://")
	serve := func(uri string) *fasthttp.RequestCtx {
		var ctx fasthttp.RequestCtx
		var req fasthttp.Request
		req.SetRequestURI(uri)
		req.Header.SetHost(host)
		req.Header.Set("User-Agent", "Mozilla/5.0")
		req.Header.Set("Accept", "text/html")
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4000}, nil)
		p.ServeFastHTTP(&ctx)
		return &ctx
	}
	if ctx := serve("/attack?id=1%27+OR+%271%27%3D%271"); ctx.Response.StatusCode() != 406 || string(ctx.Response.Body()) != "no thanks" {
		t.Errorf("attack: %d %q, want 406 with the site's page", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if ctx := serve("/fine?s=hello"); ctx.Response.StatusCode() != 200 {
		t.Errorf("benign: status %d", ctx.Response.StatusCode())
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["/attack"] != 0 || seen["/fine"] != 1 {
		t.Errorf("origin saw %v, want /fine once and no /attack", seen)
	}
	if n := p.metrics.waf.blocked.Get(); n != 1 {
		t.Errorf("blocked = %d, want 1", n)
	}
	m := metricsOf(t, p)
	for series, want := range map[string]float64{
		`ramjet_site_waf_blocked_total{site="_default"}`: 1, `ramjet_site_waf_detected_total{site="_default"}`: 0,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
}

// BenchmarkServeHitWithWAF is BenchmarkServeHit's identity hit on a site
// in block mode: what the WAF costs a cached page (nothing: the rules
// never run on a fresh hit).
func BenchmarkServeHitWithWAF(b *testing.B) {
	for _, mode := range []WAFMode{WAFOff, WAFBlock} {
		name := map[WAFMode]string{WAFOff: "waf=off", WAFBlock: "waf=block"}[mode]
		b.Run(name, func(b *testing.B) {
			t := &testing.T{}
			o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", "max-age=600")
				w.Write([]byte(strings.Repeat("x", 1024)))
			})
			defer o.Close()
			cfg := testConfig(o.URL)
			cfg.Default.WAF = testWAF(b, mode)
			p, base := startProxy(t, cfg)
			get(t, base+"/page")
			var req fasthttp.Request
			req.SetRequestURI("/page")
			req.Header.SetHost(strings.TrimPrefix(base, "http://"))
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				p.ServeFastHTTP(&ctx)
			}
		})
	}
}

// TestGuardInspectsFragmentMissesOfACachedPage: a cached ESI page is a
// hit, never inspected, but its private fragment is fetched for this
// client and inspected with the page's header fields: a client whose
// cookie carries an attack gets the page with that block empty, another
// gets it whole.
func TestGuardInspectsFragmentMissesOfACachedPage(t *testing.T) {
	o, _ := esiOrigin(t)
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	cfg.Default.WAF = testWAF(t, WAFBlock)
	p, base := startProxy(t, cfg)
	get(t, base+"/page", "Cookie", "user=alice", "User-Agent", "Mozilla/5.0", "Accept", "text/html")
	evil := get(t, base+"/page", "Cookie", "user=<script>alert(document.cookie)</script>", "User-Agent", "Mozilla/5.0", "Accept", "text/html")
	bob := get(t, base+"/page", "Cookie", "user=bob", "User-Agent", "Mozilla/5.0", "Accept", "text/html")
	if evil.status != 200 || evil.cacheStatus != "ramjet; hit" || strings.Contains(evil.body, "[hello") {
		t.Errorf("attacker: %d %q %q, want the cached page with its private block empty", evil.status, evil.cacheStatus, evil.body)
	}
	if !strings.Contains(bob.body, "[hello bob a=1&b=2]") {
		t.Errorf("bob: %q, want his private block", bob.body)
	}
	if n := p.metrics.waf.blocked.Get(); n != 1 {
		t.Errorf("blocked = %d, want 1 (the attacker's fragment)", n)
	}
}

// TestGuardInspectsACompressedResponse: with the response rules on, a
// database error leaked in a gzip-coded answer is stopped as an identity
// one is; a coded page without a leak passes.
func TestGuardInspectsACompressedResponse(t *testing.T) {
	leak := "Query failed: You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1\n"
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		text := "all fine here\n"
		if r.URL.Path == "/leak" {
			text = leak
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(text))
		zw.Close()
		if r.URL.Query().Get("plain") != "" {
			w.Write([]byte(text))
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		w.Write(b.Bytes())
	})
	set, err := waf.NewLibrary().Get(waf.Rules{Responses: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(o.URL)
	cfg.Default.WAF = WAF{Mode: WAFBlock, Rules: set}
	p, base := startProxy(t, cfg)
	if r := get(t, base+"/leak?plain=1", "User-Agent", "Mozilla/5.0", "Accept", "text/html"); r.status != 403 {
		t.Errorf("identity leak: %d", r.status)
	}
	if r := get(t, base+"/leak", "User-Agent", "Mozilla/5.0", "Accept", "text/html"); r.status != 403 || strings.Contains(r.body, "SQL syntax") {
		t.Errorf("gzip leak: %d %.80q, want 403 without it", r.status, r.body)
	}
	if r := get(t, base+"/fine", "User-Agent", "Mozilla/5.0", "Accept", "text/html"); r.status != 200 {
		t.Errorf("gzip page without a leak: %d", r.status)
	}
	if n := p.metrics.waf.responseBlocked.Get(); n != 2 {
		t.Errorf("responses blocked = %d, want 2 (the identity and the gzip leak)", n)
	}
}
