package main_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// crawlerPages are lscrawl.php's pages: cacheable, and the cart, which is not.
var crawlerPages = []string{"home", "about", "post-1", "post-2", "cart"}

// lscrawlerRun runs testdata/lscrawler.php, a crawler that decides hit,
// miss or blocklist as the LiteSpeed Cache plugin's does, over the URLs
// with its four crawlers (desktop and mobile, with and without WebP)
// against addr, the plugin's Server IP: crawler → URL → H, M, N or B.
func lscrawlerRun(t *testing.T, addr string, urls []string) map[string]map[string]string {
	t.Helper()
	out, err := exec.Command("php", append([]string{filepath.Join("testdata", "lscrawler.php"), addr}, urls...)...).Output()
	if err != nil {
		t.Fatalf("crawler: %v\n%s", err, out)
	}
	var m map[string]map[string]string
	if err := json.Unmarshal(out, &m); err != nil || len(m) != 4 {
		t.Fatalf("crawler printed %q: %v", out, err)
	}
	return m
}

// crawlSite serves lscrawl.php's site crawl.test in proxy mode behind
// nginx + php-fpm, reading the stock plugin's .htaccess with Cache Mobile
// and WebP on (proxy/htaccess/testdata/lscache79/all.htaccess), over
// HTTP/1.1, h2 and h3 on TLS.
func crawlSite(t *testing.T) *tlsRamjet {
	t.Helper()
	if _, err := exec.LookPath("php"); err != nil {
		testbed.Skip(t, "no php CLI to run the crawler")
	}
	o := startOrigin(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "proxy", "htaccess", "testdata", "lscache79", "all.htaccess"))
	if err != nil {
		t.Fatal(err)
	}
	root := testbed.PublicDir(t)
	write(t, filepath.Join(root, ".htaccess"), string(src))
	p := newPKI(t)
	p.cert, p.key = p.issue(t, "crawl", "crawl.test")
	cfg := testbed.WriteConfig(t, "", "hosts:\n  - names: [crawl.test]\n    htaccess_root: "+root+"\n")
	return startH3Ramjet(t, p, o.URL, "--config", cfg)
}

// TestLSCacheCrawlerWarmsEveryCacheablePageAndItsVariants: the LiteSpeed
// Cache plugin's crawler, pointed at ramjet, reads X-LiteSpeed-Cache as on
// LiteSpeed. Its first run finds every cacheable page a miss (stored), the
// cart blocklisted (ramjet does not cache it); its second run finds every
// cacheable page a hit, in each of its crawlers' variants, none
// blocklisted; and a visitor on a phone or a desktop, taking WebP or not,
// over HTTP/1.1, h2 or h3, is then served the page its crawler filled.
// Before: no answer carried X-LiteSpeed-Cache, so every URL was
// blocklisted on the first run and none ever crawled again.
func TestLSCacheCrawlerWarmsEveryCacheablePageAndItsVariants(t *testing.T) {
	rj := crawlSite(t)
	var urls []string
	for _, page := range crawlerPages {
		urls = append(urls, rj.HTTPS("crawl.test", "/lscrawl.php?p="+page))
	}
	cart := urls[len(urls)-1]

	for run, want := range []string{"M", "H"} {
		for crawler, statuses := range lscrawlerRun(t, rj.TLSAddr, urls) {
			for _, u := range urls {
				w := want
				if u == cart {
					w = "B" // not cacheable: LiteSpeed's crawler skips it from now on
				}
				if got := statuses[u]; got != w {
					t.Errorf("run %d, crawler %q, %s: %q, want %q", run+1, crawler, u, got, w)
				}
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	const (
		phone   = "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 13_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
		desktop = "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
		webp    = "Accept: text/html,image/webp,*/*;q=0.8"
		html    = "Accept: text/html"
	)
	visitors := []struct{ ua, accept, mobile, images string }{
		{phone, webp, "yes", "webp"}, {phone, html, "yes", "jpeg"},
		{desktop, webp, "no", "webp"}, {desktop, html, "no", "jpeg"},
	}
	clients := map[string]*http.Client{"h1": rj.client(t, "h1"), "h2": rj.client(t, "h2"), "h3": rj.h3Client(t, nil)}
	for _, page := range crawlerPages[:len(crawlerPages)-1] {
		ids := map[string]string{} // id → the variant that had it
		for proto, c := range clients {
			for _, v := range visitors {
				r := get(t, c, rj.HTTPS("crawl.test", "/lscrawl.php?p="+page), v.ua, v.accept)
				e := r.Echo()
				variant := v.mobile + "/" + v.images
				if r.Header.Get("Cache-Status") != "ramjet; hit" || r.Header.Get("X-LiteSpeed-Cache") != "hit" ||
					e["mobile"] != v.mobile || e["images"] != v.images {
					t.Errorf("%s %s, %s visitor: Cache-Status %q, X-LiteSpeed-Cache %q, page %v", proto, page, variant,
						r.Header.Get("Cache-Status"), r.Header.Get("X-LiteSpeed-Cache"), e)
				}
				if had, ok := ids[e["id"]]; ok && had != variant {
					t.Errorf("%s %s: the %s visitor got the %s page", proto, page, variant, had)
				}
				ids[e["id"]] = variant
			}
		}
		if len(ids) != len(visitors) {
			t.Errorf("%s: %d pages served to %d variants over 3 protocols: %v", page, len(ids), len(visitors), ids)
		}
	}
}

// TestLiteSpeedCacheHeaderOverEveryProtocol: misses, hits, private hits
// and ESI pages say X-LiteSpeed-Cache over HTTP/1.1, h2 and h3, answers
// ramjet does not cache do not, the plugin's own X-LiteSpeed-* fields never
// reach a client, and a site with lscache_header off sends it on none.
func TestLiteSpeedCacheHeaderOverEveryProtocol(t *testing.T) {
	rj := crawlSite(t)
	clients := map[string]*http.Client{"h1": rj.client(t, "h1"), "h2": rj.client(t, "h2"), "h3": rj.h3Client(t, nil)}
	host := "Host: crawl.test"
	admin := "Cookie: wordpress_logged_in_abc=admin%7C1"
	// A public page with the plugin's private admin-bar block in it.
	esiPage := "/e/esi?h[]=X-LiteSpeed-Cache-Control:+public,max-age=300,esi=on&body=" +
		url.QueryEscape(`<esi:include src="/lscache.php?page=lsesi&lsesi=admin-bar&_hash=5a1d" cache-control="private,no-vary"/>`)
	for proto, c := range clients {
		u := func(path string) string { return rj.HTTPS("crawl.test", path+"&proto="+proto) }
		steps := []struct {
			what, url, cookie, want string
		}{
			{"page", u("/lscrawl.php?p=about"), "", "miss"},
			{"page", u("/lscrawl.php?p=about"), "", "hit"},
			{"private page", u("/e/priv?h[]=X-LiteSpeed-Cache-Control:+private,max-age=300"), "Cookie: sess=1", "miss"},
			{"private page", u("/e/priv?h[]=X-LiteSpeed-Cache-Control:+private,max-age=300"), "Cookie: sess=1", "hit,private"},
			{"ESI page", u(esiPage), "", "miss"},
			{"ESI page", u(esiPage), "", "hit"},
			{"uncached ESI page", u("/lscache.php?page=home"), admin, ""}, // logged in: passed
			{"uncached", u("/lscrawl.php?p=cart"), "", ""},
		}
		for _, s := range steps {
			hdr := []string{host}
			if s.cookie != "" {
				hdr = append(hdr, s.cookie)
			}
			r := get(t, c, s.url, hdr...)
			if strings.Contains(s.what, "ESI page") && !strings.Contains(string(r.Body), "ADMIN-BAR for") {
				t.Errorf("%s ESI page not assembled: %q", proto, r.Body)
			}
			if got := r.Header.Values("X-LiteSpeed-Cache"); len(got) > 1 || r.Header.Get("X-LiteSpeed-Cache") != s.want {
				t.Errorf("%s %s (Cache-Status %q): X-LiteSpeed-Cache %q, want %q", proto, s.what, r.Header.Get("Cache-Status"), got, s.want)
			}
			for name := range r.Header {
				if strings.HasPrefix(strings.ToLower(name), "x-litespeed-") && !strings.EqualFold(name, "X-LiteSpeed-Cache") {
					t.Errorf("%s %s: the plugin's %s reached the client", proto, s.what, name)
				}
			}
		}
	}

	o := startOrigin(t)
	off := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "hosts:\n  - names: [off.test]\n    lscache_header: false\n"))
	c := &http.Client{Timeout: 10 * time.Second}
	for range 2 {
		r := get(t, c, off.URL+"/e/off?h[]=Cache-Control:+public,+max-age=300", "Host: off.test")
		if r.Header.Get("X-LiteSpeed-Cache") != "" {
			t.Errorf("lscache_header off: X-LiteSpeed-Cache %q (Cache-Status %q)", r.Header.Get("X-LiteSpeed-Cache"), r.Header.Get("Cache-Status"))
		}
	}
}
