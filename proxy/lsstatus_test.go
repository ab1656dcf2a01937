package proxy

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestLSCacheValueRestatesCacheStatus: X-LiteSpeed-Cache is hit exactly
// when Cache-Status says hit, hit,private for the private cache's hits,
// miss for every answer a fill of this request (or one it waited on)
// stored or revalidated, and absent from every other.
func TestLSCacheValueRestatesCacheStatus(t *testing.T) {
	tests := []struct {
		status []byte
		want   string
	}{
		{csHit, "hit"},
		{csStale, "hit"},
		{csStaleOnError, "hit"},
		{csHitPrivate, "hit,private"},
		{csStored, "miss"},
		{storedStatus(fwdVaryMiss), "miss"},
		{storedStatus(fwdStale), "miss"},
		{csStoredPrivate, "miss"},
		{csCollapsed, "miss"},
		{csRevalidated, "miss"},
		{csValidated, "miss"},
		{csBypass, ""},
		{csMethod, ""},
		{csBody, ""},
		{csHtaccess, ""},
		{csHitForPass, ""},
		{csRedirect, ""},
		{missStatus(fwdMiss, "no-cache"), ""},
		{missStatus(fwdURIMiss, "private"), ""},
		{missStatus(fwdMiss, "too-large"), ""},
	}
	for _, tt := range tests {
		if got := string(lsCacheValue(tt.status)); got != tt.want {
			t.Errorf("Cache-Status %q: X-LiteSpeed-Cache %q, want %q", tt.status, got, tt.want)
		}
	}
}

// lsOrigin answers as the LiteSpeed Cache plugin does: /page public,
// /mine private, /esi a public page with a private block, /nocache not
// cacheable. Each also claims a status of its own, which is the
// application's and never reaches a client.
func lsOrigin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-LiteSpeed-Cache", "origin-says-hit")
	switch r.URL.Path {
	case "/page":
		w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=600")
		io.WriteString(w, "page")
	case "/mine":
		w.Header().Set("X-LiteSpeed-Cache-Control", "private,max-age=600")
		io.WriteString(w, "mine")
	case "/esi":
		w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=600,esi=on")
		io.WriteString(w, `<p>page</p><esi:include src="/block" cache-control="private,no-vary"/>`)
	case "/block":
		w.Header().Set("X-LiteSpeed-Cache-Control", "private,no-vary,max-age=600")
		io.WriteString(w, "block")
	default:
		w.Header().Set("X-LiteSpeed-Cache-Control", "no-cache")
		io.WriteString(w, "nocache")
	}
}

// TestLSCacheSiteTellsTheCrawlerHitOrMiss: a site speaking the LSCache
// protocol sends X-LiteSpeed-Cache as LiteSpeed does — miss when a page is
// stored, hit (hit,private) when served from the cache, ESI pages alike —
// and none on an answer it does not cache, so the plugin's crawler warms
// the first and blocklists the second. The application's own never goes
// out, and a site with lscache_header off sends none.
func TestLSCacheSiteTellsTheCrawlerHitOrMiss(t *testing.T) {
	cfg := testConfig(newTestOrigin(t, lsOrigin).URL)
	cfg.Default.LSCacheHeader = true
	_, base := startProxy(t, cfg)
	session := []string{"Cookie", "session=1"}
	steps := []struct {
		path string
		hdr  []string
		want string
	}{
		{"/page", nil, "miss"},
		{"/page", nil, "hit"},
		{"/mine", session, "miss"},
		{"/mine", session, "hit,private"},
		{"/esi", nil, "miss"},
		{"/esi", nil, "hit"},
		{"/esi", []string{"Cookie", "wordpress_logged_in_x=1"}, ""}, // bypassed, assembled, not kept
		{"/nocache", nil, ""},
		{"/nocache", nil, ""},
	}
	for _, s := range steps {
		r := get(t, base+s.path, s.hdr...)
		if got := r.header.Values("X-LiteSpeed-Cache"); len(got) > 1 || r.header.Get("X-LiteSpeed-Cache") != s.want {
			t.Errorf("%s (Cache-Status %q): X-LiteSpeed-Cache %q, want %q", s.path, r.cacheStatus, got, s.want)
		}
	}

	cfg.Default.LSCacheHeader = false
	_, off := startProxy(t, cfg)
	for _, path := range []string{"/page", "/page", "/nocache"} {
		if r := get(t, off+path); r.header.Get("X-LiteSpeed-Cache") != "" {
			t.Errorf("lscache_header off, %s: X-LiteSpeed-Cache %q", path, r.header.Get("X-LiteSpeed-Cache"))
		}
	}
}

// peekLSCache is the X-LiteSpeed-Cache value h holds, set in LiteSpeed's
// spelling (which fasthttp's Peek would normalise away).
func peekLSCache(h *fasthttp.ResponseHeader) string {
	h.DisableNormalizing()
	defer h.EnableNormalizing()
	return string(h.PeekBytes(hdrLiteSpeedCache))
}

// FuzzLSCacheValue: whatever a Cache-Status value holds, X-LiteSpeed-Cache
// is one of LiteSpeed's values or absent, and hit only when an item of it
// is hit.
func FuzzLSCacheValue(f *testing.F) {
	for _, s := range [][]byte{csHit, csHitPrivate, csStale, csStaleOnError, csStored, csStoredPrivate,
		csCollapsed, csRevalidated, csValidated, csBypass, csHitForPass, []byte("ramjet; hitx; stored"), []byte(";;hit;")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, status []byte) {
		v := lsCacheValue(status)
		switch string(v) {
		case "hit", "hit,private":
			hit := false
			for _, item := range bytes.Split(status, []byte(";")) {
				hit = hit || string(bytes.TrimSpace(item)) == "hit"
			}
			if !hit {
				t.Fatalf("%q: %q without a hit item", status, v)
			}
		case "miss", "":
		default:
			t.Fatalf("%q: %q", status, v)
		}
	})
}

// lscacheConfig is testConfig with the LSCache protocol on, as sites
// have it by default: hits also say X-LiteSpeed-Cache.
func lscacheConfig(originURL string) Config {
	cfg := testConfig(originURL)
	cfg.Default.LSCacheHeader = true
	return cfg
}
