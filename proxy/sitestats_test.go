package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/sitestats"
)

// Each site's stats count its own requests by how the cache answered
// them, and list the URLs answered uncached with the reason its
// Cache-Status gave.
func TestSiteStatsCountEachSitesRequestsAndListItsUncachedURLs(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cart":
			w.Header().Set("Cache-Control", "max-age=60")
			w.Header().Set("Set-Cookie", "cart=1")
		case "/account":
			w.Header().Set("Cache-Control", "private, max-age=60")
		case "/fail":
			w.WriteHeader(http.StatusInternalServerError)
			return
		default:
			w.Header().Set("Cache-Control", "max-age=60")
		}
		fmt.Fprint(w, r.URL.Path)
	})
	cfg := testConfig(o.URL)
	a, b := cfg.Default, cfg.Default
	a.Names, b.Names = []string{"a.test"}, []string{"b.test"}
	cfg.Sites = []Site{a, b}
	cfg.Stats = sitestats.Config{TopURLs: 10}
	p := newTestProxy(t, cfg, nil)
	warm(t, p, "a.test", "/home", "a.test", "/home", "a.test", "/home", // miss, 2 hits
		"a.test", "/cart", "a.test", "/cart", "a.test", "/account", "a.test", "/fail",
		"b.test", "/home")
	ctx := requestCtx("GET", "a.test", "/home", false)
	ctx.Request.Header.Set("Cookie", "wordpress_logged_in_x=1")
	p.ServeFastHTTP(ctx) // bypass

	st, ok := p.SiteStatsOf("a.test")
	if !ok {
		t.Fatal("no stats for a.test")
	}
	got := st.History.Over(sitestats.Minute, time.Now())
	// Misses are fills (/home, /cart, /account, /fail); passes the bypass
	// and the second /cart, which the first made hit-for-pass: each
	// request counts once.
	want := sitestats.Counts{Requests: 8, Hits: 2, Misses: 4, Passes: 2, Errors: 1, Origin: 6}
	got.OriginTime = 0
	if got != want {
		t.Errorf("a.test's last minute:\n got %+v\nwant %+v", got, want)
	}
	if st.Entries != 1 {
		t.Errorf("a.test has %d entries cached, want 1 (/home)", st.Entries)
	}
	reasons := map[string]string{}
	for _, u := range st.History.URLs(time.Now()) {
		reasons[u.URL] = fmt.Sprintf("%s×%d", u.Reason, u.Count)
	}
	wantReasons := map[string]string{"http://a.test/cart": "set-cookie×2", "http://a.test/account": "private×1",
		"http://a.test/fail": "no-ttl×1", "http://a.test/home": "bypass×1"}
	if fmt.Sprint(reasons) != fmt.Sprint(wantReasons) {
		t.Errorf("a.test's uncached URLs:\n got %v\nwant %v", reasons, wantReasons)
	}
	if bs, _ := p.SiteStatsOf("b.test"); bs.History.Totals().Requests != 1 || len(bs.History.URLs(time.Now())) != 0 {
		t.Errorf("b.test: %+v and URLs %v, want its 1 request and no uncached URL", bs.History.Totals(), bs.History.URLs(time.Now()))
	}
}

func TestUncachedReasonReadsRamjetsCacheStatus(t *testing.T) {
	tests := []struct{ cs, want string }{
		{"ramjet; hit", ""},
		{"ramjet; hit; fwd=stale", ""},
		{"ramjet; fwd=miss; stored", ""},
		{"ramjet; fwd=miss; collapsed", ""},
		{"ramjet; fwd=stale; fwd-status=304", ""},
		{"ramjet; fwd=miss; detail=set-cookie", "set-cookie"},
		{"ramjet; fwd=miss; detail=vary-star", "vary-star"},
		{"ramjet; fwd=bypass", "bypass"},
		{"ramjet; fwd=bypass; detail=htaccess", "htaccess"},
		{"ramjet; fwd=method", "method"},
		{"ramjet; fwd=uri-miss", "uri-miss"},
		{"ramjet; detail=https-redirect", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := string(uncachedReason([]byte(tt.cs))); got != tt.want {
			t.Errorf("uncachedReason(%q) = %q, want %q", tt.cs, got, tt.want)
		}
	}
}

// A request the WAF stopped is counted as blocked and listed with the
// reason "waf", in its site's stats.
func TestSiteStatsListWhatTheWAFStopped(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	cfg := testConfig(o.URL)
	cfg.Default.WAF = testWAF(t, WAFBlock)
	cfg.Stats = sitestats.Config{TopURLs: 10}
	p := newTestProxy(t, cfg, nil)
	ctx := requestCtx("GET", "a.test", "/attack?id=1%27+OR+%271%27%3D%271", false)
	ctx.Request.Header.Set("User-Agent", "Mozilla/5.0")
	ctx.Request.Header.Set("Accept", "text/html")
	p.ServeFastHTTP(ctx)
	if ctx.Response.StatusCode() != http.StatusForbidden {
		t.Fatalf("the attack: status %d, want 403", ctx.Response.StatusCode())
	}
	st := p.sites.lookup(defaultSiteLabel).view()
	urls := st.History.URLs(time.Now())
	if got := st.History.Totals(); got.WAFBlocked != 1 || got.Requests != 1 {
		t.Errorf("totals %+v, want the 1 request, blocked", got)
	}
	if len(urls) != 1 || urls[0].Reason != "waf" || urls[0].URL != "http://a.test/attack?id=1%27+OR+%271%27%3D%271" {
		t.Errorf("uncached URLs %+v, want the attack with reason waf", urls)
	}
}

// FuzzUncachedReason: any Cache-Status reads without a panic, a reason is
// a part of the value, and a value that says the cache answered or stored
// has none.
func FuzzUncachedReason(f *testing.F) {
	for _, s := range []string{"ramjet; hit", "ramjet; fwd=miss; detail=set-cookie", "ramjet; fwd=bypass", ";;fwd=;detail=",
		"ramjet; fwd=miss; stored", "fwd=uri-miss; detail=x; hit", "", ";"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, cs []byte) {
		got := uncachedReason(cs)
		if got != nil && !bytes.Contains(cs, got) {
			t.Fatalf("reason %q is not in %q", got, cs)
		}
		for _, p := range bytes.Split(cs, []byte(";")) {
			if p = bytes.TrimSpace(p); bytes.Equal(p, []byte("hit")) || bytes.Equal(p, []byte("stored")) {
				if got != nil {
					t.Fatalf("%q: reason %q for an answer of the cache", cs, got)
				}
			}
		}
	})
}
