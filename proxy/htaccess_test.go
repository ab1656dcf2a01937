package proxy

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
)

// wordpressSite is a docroot site laid out like WordPress, with the
// .htaccess WordPress and the LiteSpeed Cache plugin write (htaccess
// true) or none, and a php-cgi pool whose index.php answers every
// permalink with a cacheable page.
func wordpressSite(t testing.TB, htaccess bool) Site {
	t.Helper()
	dir := testbed.PublicDir(t)
	files := map[string]string{
		"index.php":            "<?php header('X-LiteSpeed-Cache-Control: public,max-age=600'); echo 'page ', $_SERVER['REQUEST_URI'];",
		"hello.php":            "<?php echo 'Hello, World!';",
		"wp-content/style.css": "body { color: black }\n",
	}
	if htaccess {
		src, err := os.ReadFile("htaccess/testdata/wordpress.htaccess")
		if err != nil {
			t.Fatal(err)
		}
		files[".htaccess"] = string(src)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	front := "/index.php" // without .htaccess: nginx's try_files
	if htaccess {
		front = ""
	}
	return Site{Cache: true, Docroot: &Docroot{
		Config: docroot.Config{Root: dir, FrontController: front, Htaccess: htaccess, StaticTTL: 3600e9},
		PHP:    &phppool.Config{Binary: testbed.PHPCGI(t), Min: 1, Max: 2},
	}}
}

// docrootConfig serves site alone; the origin is never asked.
func docrootConfig(site Site) Config {
	return Config{Origin: origin.Config{Servers: []string{"http://127.0.0.1:1"}}, Default: site}
}

// hitCtx is a request for path from a browser.
func hitCtx(path, ua string) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	ctx.Request.SetRequestURI(path)
	ctx.Request.Header.SetHost("wp.test")
	ctx.Request.Header.Set("User-Agent", ua)
	ctx.Request.Header.Set("Accept", "text/html")
	return &ctx
}

const (
	desktopAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
	mobileAgent  = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Mobile Safari/537.36"
)

func TestHtaccessPermalinkIsCachedPerVariant(t *testing.T) {
	p := newTestProxy(t, docrootConfig(wordpressSite(t, true)), nil)
	serve := func(path, ua string) (string, string) {
		ctx := hitCtx(path, ua)
		p.ServeFastHTTP(ctx)
		return string(ctx.Response.Header.Peek("Cache-Status")), string(ctx.Response.Body())
	}
	if cs, body := serve("/hello-world/", desktopAgent); cs != "ramjet; fwd=miss; stored" || body != "page /hello-world/" {
		t.Fatalf("desktop: %q %q", cs, body)
	}
	if cs, _ := serve("/hello-world/", mobileAgent); cs == "ramjet; hit" {
		t.Fatal("mobile got the desktop variant")
	}
	for _, ua := range []string{desktopAgent, mobileAgent} {
		if cs, _ := serve("/hello-world/", ua); cs != "ramjet; hit" {
			t.Fatalf("%s: %q, want a hit", ua, cs)
		}
	}
}

// TestHtaccessInlineHitAndRefusal: an HTTP/2 inline hit (ServeHit) runs
// the rewrite stage too: a cached permalink is answered inline, and a
// request the rules refuse is declined to the full path, which passes it
// to the docroot (403).
func TestHtaccessInlineHitAndRefusal(t *testing.T) {
	site := wordpressSite(t, true)
	if err := os.WriteFile(filepath.Join(site.Docroot.Root, "wp-content/.htaccess"), []byte("<Files secret.txt>\nRequire all denied\n</Files>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newTestProxy(t, docrootConfig(site), nil)
	p.ServeFastHTTP(hitCtx("/hello-world/", desktopAgent))
	inline := hitCtx("/hello-world/", desktopAgent)
	if !p.ServeHit(inline) || string(inline.Response.Header.Peek("Cache-Status")) != "ramjet; hit" {
		t.Fatalf("cached permalink not answered inline: %q", inline.Response.Header.Peek("Cache-Status"))
	}
	if p.ServeHit(hitCtx("/wp-content/secret.txt", desktopAgent)) {
		t.Fatal("a refused request was answered inline")
	}
	full := hitCtx("/wp-content/secret.txt", desktopAgent)
	p.ServeFastHTTP(full)
	if full.Response.StatusCode() != 403 || string(full.Response.Header.Peek("Cache-Status")) != string(csHtaccess) {
		t.Fatalf("refused request: %d %q", full.Response.StatusCode(), full.Response.Header.Peek("Cache-Status"))
	}
}

// TestHtaccessRoutesESIFragments: a fragment's sub-request goes through
// the site's rules like a page: /esi/one is rewritten to frag.php.
func TestHtaccessRoutesESIFragments(t *testing.T) {
	site := wordpressSite(t, true)
	site.ESI = true
	root := site.Docroot.Root
	src, err := os.ReadFile(filepath.Join(root, ".htaccess"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".htaccess": "RewriteEngine On\nRewriteRule ^esi/(.*)$ /frag.php?name=$1 [L]\n" + string(src),
		"page.php":  "<?php header('X-LiteSpeed-Cache-Control: public,max-age=60,esi=on'); echo '<p>before <esi:include src=\"/esi/one\"/> after</p>';",
		"frag.php":  "<?php header('X-LiteSpeed-Cache-Control: public,max-age=60'); echo 'frag ', $_GET['name'];",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := newTestProxy(t, docrootConfig(site), nil)
	ctx := hitCtx("/page.php", desktopAgent)
	p.ServeFastHTTP(ctx)
	if body := string(ctx.Response.Body()); body != "<p>before frag one after</p>" {
		t.Fatalf("assembled page %q", body)
	}
}

// TestHtaccessDoesNotRefusePurges: a PURGE is ramjet's own business
// (purge.trusted decides it), not the site's rules'.
func TestHtaccessDoesNotRefusePurges(t *testing.T) {
	site := wordpressSite(t, true)
	if err := os.WriteFile(filepath.Join(site.Docroot.Root, ".htaccess"), []byte("Require all denied\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newTestProxy(t, docrootConfig(site), nil)
	ctx := hitCtx("/hello-world/", desktopAgent)
	ctx.Request.Header.SetMethod("PURGE")
	p.ServeFastHTTP(ctx)
	if ctx.Response.StatusCode() != 200 {
		t.Fatalf("PURGE from loopback: %d %q", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	get := hitCtx("/hello-world/", desktopAgent)
	p.ServeFastHTTP(get)
	if get.Response.StatusCode() != 403 {
		t.Fatalf("GET under Require all denied: %d", get.Response.StatusCode())
	}
}

// TestHtaccessRepeatedPassesGetTheirOwnRuleEnvironment: the docroot
// remembers its evaluation of the rules per request (docrootKey), so a
// repeated request costs no second run of them; each request still gets
// what the rules make of its own headers (WordPress's
// E=HTTP_AUTHORIZATION, the mobile variant), and never the vary value a
// client sent itself.
func TestHtaccessRepeatedPassesGetTheirOwnRuleEnvironment(t *testing.T) {
	site := wordpressSite(t, true)
	site.BypassCookies = []string{"wordpress_logged_in_*"}
	script := "<?php echo $_SERVER['HTTP_AUTHORIZATION'] ?? '-', ' ', $_SERVER['LSCACHE_VARY_VALUE'] ?? '-', ' ', $_SERVER['HTTP_X_LSCACHE_VARY_VALUE'] ?? '-';"
	if err := os.WriteFile(filepath.Join(site.Docroot.Root, "env.php"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newTestProxy(t, docrootConfig(site), nil)
	serve := func(path, auth, ua string) string {
		ctx := hitCtx(path, ua)
		ctx.Request.Header.Set("Cookie", "wordpress_logged_in_x=1")
		ctx.Request.Header.Set("Authorization", auth)
		ctx.Request.Header.Add("x-lscache-vary-value", "forged") // a client's own is never passed on
		ctx.Request.Header.Add("X-LSCACHE-VARY-VALUE", "forged")
		p.ServeFastHTTP(ctx)
		if ctx.Response.StatusCode() != 200 {
			t.Fatalf("%s: status %d %q", path, ctx.Response.StatusCode(), ctx.Response.Body())
		}
		return string(ctx.Response.Body())
	}
	for range 3 {
		for _, tt := range []struct{ path, auth, ua, want string }{
			{"/env.php", "Bearer a", desktopAgent, "Bearer a webp webp"},
			{"/env.php", "Bearer b", mobileAgent, "Bearer b ismobile ismobile"},
			{"/env.php", "Bearer c", "curl/8.5", "Bearer c - -"},
			{"/hello-world/", "Bearer a", desktopAgent, "page /hello-world/"},
		} {
			if got := serve(tt.path, tt.auth, tt.ua); got != tt.want {
				t.Fatalf("%s with %q: %q, want %q", tt.path, tt.auth, got, tt.want)
			}
		}
	}
}

// TestLSRulesAreMadeOncePerValue: fills whose rules said the same share
// one lsRules; another TTL or vary list gets its own, as it says.
func TestLSRulesAreMadeOncePerValue(t *testing.T) {
	var c lsRulesCache
	a := c.get(&htaccess.Cache{TTL: 60, VaryCookies: []byte("a, b")})
	if b := c.get(&htaccess.Cache{TTL: 60, VaryCookies: []byte("a, b")}); b != a {
		t.Fatal("the same rules made a second lsRules")
	}
	if string(a.control) != "public,max-age=60" || len(a.varyCookies) != 2 || a.varyCookies[1] != "b" {
		t.Fatalf("made %q %q", a.control, a.varyCookies)
	}
	if p := c.get(&htaccess.Cache{TTL: 60, Private: true, VaryCookies: []byte("a, b")}); p == a || string(p.control) != "private,max-age=60" {
		t.Fatalf("a private TTL got %q", p.control)
	}
	if o := c.get(&htaccess.Cache{VaryCookies: []byte("c")}); len(o.varyCookies) != 1 || o.varyCookies[0] != "c" || o.control != nil {
		t.Fatalf("another list got %q %q", o.control, o.varyCookies)
	}
}

// TestLSRulesOfTheCacheDirectives: CacheDisable asks for no-cache when
// the application says nothing; CacheEnable's blanket TTL yields to the
// response's own no-cache, no-store or private unless
// CacheIgnoreCacheControl; a rule's TTL never does.
func TestLSRulesOfTheCacheDirectives(t *testing.T) {
	var c lsRulesCache
	if d := c.get(&htaccess.Cache{Disabled: true}); string(d.control) != "no-cache" || d.overruled([]byte("no-cache")) {
		t.Fatalf("CacheDisable made %q", d.control)
	}
	enabled := c.get(&htaccess.Cache{TTL: 3600, Enabled: true})
	ignoring := c.get(&htaccess.Cache{TTL: 3600, Enabled: true, IgnoreCacheControl: true})
	rule := c.get(&htaccess.Cache{TTL: 3600})
	for _, cc := range []string{"no-cache", "public, no-store", "private, max-age=60"} {
		if !enabled.overruled([]byte(cc)) || ignoring.overruled([]byte(cc)) || rule.overruled([]byte(cc)) {
			t.Fatalf("%q: overrules CacheEnable %v, with CacheIgnoreCacheControl %v, a rule %v", cc, enabled.overruled([]byte(cc)), ignoring.overruled([]byte(cc)), rule.overruled([]byte(cc)))
		}
	}
	if enabled.overruled([]byte("public, max-age=60")) || enabled.overruled(nil) {
		t.Fatal("a cacheable Cache-Control overruled CacheEnable")
	}
}
