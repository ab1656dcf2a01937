package wordpress_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// The site's own .htaccess, as WordPress and the LiteSpeed Cache plugin
// write it (testdata/lscache-wordpress.htaccess: the plugin's LSCACHE and
// NON_LSCACHE blocks, with the do-not-cache cookie rj_nocache, then
// WordPress's block), plus what other plugins and panels add: a
// W3 Total Cache style browser-cache block, a Wordfence-style .user.ini
// deny and a redirect.
const extraHtaccess = `
# BEGIN W3TC Browser Cache
<IfModule mod_expires.c>
    ExpiresActive On
    ExpiresByType image/png A31536000
</IfModule>
<FilesMatch "\.(png|PNG)$">
    <IfModule mod_headers.c>
        Header set Pragma "public"
        Header append Cache-Control "public"
    </IfModule>
</FilesMatch>
# END W3TC Browser Cache
# Wordfence WAF
<Files ".user.ini">
<IfModule mod_authz_core.c>
    Require all denied
</IfModule>
<IfModule !mod_authz_core.c>
    Order deny,allow
    Deny from all
</IfModule>
</Files>
# END Wordfence WAF
`

// redirectBlock goes first: after WordPress's block every missing path
// is index.php's.
const redirectBlock = `<IfModule mod_rewrite.c>
RewriteEngine On
RewriteRule ^old-post/?$ /post-b/ [R=301,L,QSA]
</IfModule>
`

// restProbe is a must-use plugin that answers /wp-json/rj/v1/auth with
// what PHP got of the request's Authorization.
const restProbe = `<?php
add_action('rest_api_init', function () {
	register_rest_route('rj/v1', '/auth', ['methods' => 'GET', 'permission_callback' => '__return_true',
		'callback' => function () {
			return ['auth' => $_SERVER['HTTP_AUTHORIZATION'] ?? '', 'redirect_auth' => $_SERVER['REDIRECT_HTTP_AUTHORIZATION'] ?? ''];
		}]);
});
`

// TestWordPressDocrootWithItsOwnHtaccess runs a real WordPress in docroot
// mode with no front controller in the config: its .htaccess alone makes
// permalinks, /wp-json/ and wp-admin work, and the LiteSpeed Cache
// plugin's rules drive ramjet's cache as LiteSpeed's.
func TestWordPressDocrootWithItsOwnHtaccess(t *testing.T) {
	requireStack(t)
	db := testbed.StartMariaDB(t)
	n := reserveNode(t, "web1")
	wp := installWordPress(t, db, n.AdminURL)
	src, err := os.ReadFile("testdata/lscache-wordpress.htaccess")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, wp.docroot+"/.htaccess", redirectBlock+string(src)+extraHtaccess)
	mkdir(t, wp.docroot+"/wp-content/mu-plugins")
	writeFile(t, wp.docroot+"/wp-content/mu-plugins/rj-auth.php", restProbe)
	uploads := wp.docroot + "/wp-content/uploads"
	mkdir(t, uploads+"/private")
	writeFile(t, uploads+"/.htaccess", "<Files *.php>\nOrder Deny,Allow\nDeny from all\n</Files>\n")
	writeFile(t, uploads+"/evil.php", "<?php echo 'ran';")
	writeFile(t, uploads+"/pic.png", "\x89PNG\r\n\x1a\n")
	htpasswd := filepath.Join(filepath.Dir(wp.docroot), "htpasswd")
	writeFile(t, htpasswd, "alice:$apr1$wfhLOxEm$eHEZeByGUCLLE1frU.a0s0\n") // htpasswd -nbm alice s3cret
	writeFile(t, uploads+"/private/.htaccess", "AuthType Basic\nAuthName \"Members\"\nAuthUserFile "+htpasswd+"\nRequire valid-user\n")
	writeFile(t, uploads+"/private/doc.txt", "members only\n")
	writeFile(t, wp.docroot+"/.user.ini", "memory_limit = 256M\n")

	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  token: %q
defaults:
  grace: 0s
hosts:
  - names: [%q]
    admin_token: %q
    docroot:
      root: %q
      serve: all
      front_controller: ""
      htaccess: on
      php:
        workers: 2
`, operatorToken, siteHost, adminToken, wp.docroot))
	n.Start(t, "--config", cfg)
	waitWordPress(t, n.URL)

	anon := newBrowser("anon", n.URL)
	t.Run("Permalinks", func(t *testing.T) {
		anon.expect(t, "/post-b/", statusMiss, "Post B original")
		anon.expect(t, "/post-b/", statusHit, "Post B original")
		anon.expect(t, "/category/news/", statusMiss, "Post B original")
	})
	t.Run("RESTWithAuthorization", func(t *testing.T) {
		b := newBrowser("rest", n.URL)
		b.headers = map[string]string{"Authorization": "Bearer rj-token"}
		p := b.get(t, "/wp-json/rj/v1/auth")
		if !strings.Contains(p.body, `"auth":"Bearer rj-token"`) || !strings.Contains(p.body, `"redirect_auth":"Bearer rj-token"`) {
			t.Fatalf("PHP did not get Authorization through the rewrite: %s", p.body)
		}
		b.get(t, "/wp-json/wp/v2/posts")
	})
	t.Run("StaticFilesGetBrowserCacheHeaders", func(t *testing.T) {
		p := anon.get(t, "/wp-includes/css/dashicons.min.css")
		if cc := p.header.Get("Cache-Control"); cc != "max-age=31557600" || p.header.Get("Expires") == "" {
			t.Errorf("css: Cache-Control %q Expires %q, want the plugin's ExpiresByType text/css", cc, p.header.Get("Expires"))
		}
		p = anon.get(t, "/wp-content/uploads/pic.png")
		if cc := p.header.Get("Cache-Control"); cc != "max-age=31536000, public" || p.header.Get("Pragma") != "public" {
			t.Errorf("png: Cache-Control %q Pragma %q, want W3TC's ExpiresByType (the later one) then its Header append", cc, p.header.Get("Pragma"))
		}
	})
	t.Run("Admin", func(t *testing.T) {
		p := anon.do(t, http.MethodGet, "/wp-admin/", nil)
		if p.status != http.StatusFound || !strings.Contains(p.header.Get("Location"), "wp-login.php") {
			t.Errorf("/wp-admin/: %d %q, want 302 to wp-login.php", p.status, p.header.Get("Location"))
		}
		if p := anon.do(t, http.MethodGet, "/wp-admin", nil); p.status != http.StatusMovedPermanently || p.header.Get("Location") != "http://"+siteHost+"/wp-admin/" {
			t.Errorf("/wp-admin: %d %q", p.status, p.header.Get("Location"))
		}
		anon.get(t, "/wp-login.php")
	})
	t.Run("MobileGetsItsOwnCachedVariant", func(t *testing.T) {
		desk := newBrowser("desktop", n.URL)
		desk.headers = map[string]string{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0"}
		mob := newBrowser("mobile", n.URL)
		mob.headers = map[string]string{"User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148"}
		desk.expect(t, "/post-d/", statusMiss, "Post D original")
		desk.expect(t, "/post-d/", statusHit)
		if p := mob.get(t, "/post-d/"); !strings.Contains(p.cacheStatus, "stored") {
			t.Errorf("mobile after desktop: Cache-Status %q, want its own stored variant", p.cacheStatus)
		}
		mob.expect(t, "/post-d/", statusHit, "Post D original")
		desk.expect(t, "/post-d/", statusHit)
	})
	t.Run("DoNotCacheCookieBypasses", func(t *testing.T) {
		b := newBrowser("nocache", n.URL)
		b.cookies["rj_nocache"] = "1"
		b.expect(t, "/post-b/", "ramjet; fwd=bypass", "Post B original")
	})
	t.Run("AccessControl", func(t *testing.T) {
		for path, want := range map[string]int{
			"/wp-content/uploads/evil.php":         403,
			"/.user.ini":                           403,
			"/wp-content/uploads/private/doc.txt":  401,
			"/wp-content/litespeed/debug/x.log":    403,
			"/wp-content/uploads/nothing-here.txt": 404,
		} {
			if p := anon.do(t, http.MethodGet, path, nil); p.status != want {
				t.Errorf("%s: %d, want %d", path, p.status, want)
			}
		}
		m := newBrowser("member", n.URL)
		m.headers = map[string]string{"Authorization": "Basic YWxpY2U6czNjcmV0"}
		if p := m.get(t, "/wp-content/uploads/private/doc.txt"); p.body != "members only\n" {
			t.Errorf("member: %q", p.body)
		}
	})
	t.Run("RedirectKeepsTheQuery", func(t *testing.T) {
		p := anon.do(t, http.MethodGet, "/old-post/?ref=mail", nil)
		if p.status != http.StatusMovedPermanently || p.header.Get("Location") != "http://"+siteHost+"/post-b/?ref=mail" {
			t.Errorf("old-post: %d %q", p.status, p.header.Get("Location"))
		}
	})
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestWordPressProxyModeWithHtaccessRoot: in front of nginx + php-fpm,
// htaccess_root makes the LiteSpeed Cache plugin's block work: a mobile
// variant of its own, the do-not-cache cookie, and its browser-cache
// block on static files nginx serves.
func TestWordPressProxyModeWithHtaccessRoot(t *testing.T) {
	requireStack(t)
	db := testbed.StartMariaDB(t)
	n := reserveNode(t, "web1")
	wp := installWordPress(t, db, n.AdminURL)
	src, err := os.ReadFile("testdata/lscache-wordpress.htaccess")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, wp.docroot+"/.htaccess", string(src))
	origin := startTypedOrigin(t, wp.docroot)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  token: %q
origin:
  servers: [%q]
defaults:
  grace: 0s
hosts:
  - names: [%q]
    admin_token: %q
    htaccess_root: %q
`, operatorToken, origin, siteHost, adminToken, wp.docroot))
	n.Start(t, "--config", cfg)
	desk := newBrowser("desktop", n.URL)
	desk.headers = map[string]string{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101"}
	mob := newBrowser("mobile", n.URL)
	mob.headers = map[string]string{"User-Agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) Mobile Safari/537.36"}
	desk.expect(t, "/post-d/", statusMiss, "Post D original")
	desk.expect(t, "/post-d/", statusHit)
	if p := mob.get(t, "/post-d/"); !strings.Contains(p.cacheStatus, "stored") {
		t.Errorf("mobile after desktop: Cache-Status %q, want its own stored variant", p.cacheStatus)
	}
	mob.expect(t, "/post-d/", statusHit, "Post D original")
	nc := newBrowser("nocache", n.URL)
	nc.cookies["rj_nocache"] = "1"
	nc.expect(t, "/post-d/", "ramjet; fwd=bypass", "Post D original")
	p := desk.get(t, "/wp-includes/css/dashicons.min.css")
	if cc := p.header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31557600") || p.header.Get("Expires") == "" {
		t.Errorf("css from nginx: Cache-Control %q Expires %q, want the plugin's ExpiresByType text/css", cc, p.header.Get("Expires"))
	}
}

// startTypedOrigin is startOrigin with the media types of the files the
// browser-cache rules name (testbed's nginx serves every file as
// application/octet-stream).
func startTypedOrigin(t *testing.T, docroot string) string {
	t.Helper()
	fpm := testbed.StartPHPFPM(t, "php_admin_flag[display_errors] = off\nphp_admin_value[memory_limit] = 256M\n")
	return startWordPressNginx(t, docroot, fpm.Addr,
		"\ttypes { text/html html; text/css css; application/javascript js; image/png png; }\n")
}
