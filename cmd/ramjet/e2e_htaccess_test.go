package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// htaccessTree is a site whose behaviour lives in its .htaccess files,
// as on Apache with AllowOverride All. show.php prints what PHP got.
var htaccessTree = map[string]string{
	".htaccess": `RewriteEngine On
RewriteRule ^old/(.*)$ /new/$1 [R=301,L]
RewriteRule ^qsa$ /show.php?added=1 [QSA,L]
RewriteRule ^pretty/([a-z]+)/?$ /show.php?name=$1 [L]
RewriteCond %{HTTP_USER_AGENT} BadBot [NC]
RewriteRule .* - [F]
RewriteRule ^gone$ - [G]
RewriteCond %{QUERY_STRING} ^id=([0-9]+)$
RewriteRule ^item$ /item-%1.html? [R=302,L]
RewriteRule ^env$ /show.php [E=FOO:bar,L]
RewriteCond %{REQUEST_FILENAME} !-f
RewriteCond %{REQUEST_FILENAME} !-d
RewriteRule ^blog/ /show.php [L]
RewriteCond %{HTTP_HOST} ^www\.(.+)$ [NC]
RewriteRule ^(.*)$ http://%1/$1 [R=301,L]
Redirect 301 /moved /show.php
RedirectMatch 302 ^/archive/([0-9]+)$ /show.php?year=$1
ErrorDocument 404 /notfound.html
`,
	"show.php": `<?php
foreach (['REQUEST_URI', 'QUERY_STRING', 'SCRIPT_NAME', 'REDIRECT_FOO', 'FOO', 'HTTP_AUTHORIZATION', 'REMOTE_USER'] as $k) {
	echo $k, '=', $_SERVER[$k] ?? '', "\n";
}
echo 'GET=', json_encode($_GET), "\n";
`,
	"index.php":          "<?php echo 'index';",
	"notfound.html":      "custom not found\n",
	"private/.htaccess":  "AuthType Basic\nAuthName \"Private area\"\nAuthUserFile HTPASSWD\nRequire valid-user\n",
	"private/index.html": "private index\n",
	"denied/.htaccess":   "Order deny,allow\nDeny from all\n",
	"denied/a.txt":       "never\n",
	"uploads/.htaccess":  "<Files *.php>\nOrder Deny,Allow\nDeny from all\n</Files>\n",
	"uploads/evil.php":   "<?php echo 'ran';",
	"uploads/ok.txt":     "upload\n",
	"static/.htaccess":   "ExpiresActive On\nExpiresByType text/css \"access plus 1 day\"\nHeader set X-Static yes\nAddType text/x-custom .cst\n",
	"static/a.css":       "body{}\n",
	"static/f.cst":       "custom\n",
	"sub/.htaccess":      "RewriteEngine On\nRewriteRule ^x$ y.txt [L]\n",
	"sub/y.txt":          "sub y\n",
	"inherit/.htaccess":  "RewriteEngine On\nRewriteOptions Inherit\nRewriteRule ^z$ /show.php?from=inherit [L]\n",
	"loop/.htaccess":     "RewriteEngine On\nRewriteRule ^(.*)$ /loop/$1x [L]\n",
	"files/.htaccess":    "<FilesMatch \"\\.(log|sql)$\">\nRequire all denied\n</FilesMatch>\n",
	"files/dump.sql":     "secret\n",
	"files/readme.txt":   "files readme\n",
	"index/.htaccess":    "DirectoryIndex start.html\n",
	"index/start.html":   "start page\n",
	"envgate/.htaccess":  "SetEnvIf User-Agent ^Trusted LETIN\nOrder deny,allow\nDeny from all\nAllow from env=LETIN\n",
	"envgate/a.txt":      "gate\n",
	"any/.htaccess":      "Order deny,allow\nDeny from all\nAuthType Basic\nAuthName Any\nAuthUserFile HTPASSWD\nRequire valid-user\nSatisfy any\n",
	"any/a.txt":          "any\n",
	"limit/.htaccess":    "<LimitExcept GET>\nRequire all denied\n</LimitExcept>\n",
	"limit/a.txt":        "limit\n",
	"flags/.htaccess": `RewriteEngine On
RewriteRule ^skip$ - [S=1]
RewriteRule ^skip$ /flags/wrong.txt [L]
RewriteRule ^skip$ /flags/right.txt [L]
RewriteRule ^chain$ - [C]
RewriteRule ^none$ /flags/wrong.txt [L]
RewriteRule ^chain$ /flags/right.txt [L]
RewriteRule ^qsd$ /show.php [QSD,L]
RewriteRule ^end$ /flags/end2 [END]
RewriteRule ^end2$ /flags/wrong.txt [L]
RewriteRule ^nc$ /flags/right.txt [NC,L]
RewriteCond %{REQUEST_FILENAME} -d
RewriteRule ^(.+)$ /show.php?dir=$1 [L]
RewriteRule ^b/(.*)$ /show.php?v=$1 [B,L]
RewriteRule ^typed$ /flags/right.txt [T=text/x-typed,L]
`,
	"flags/right.txt":  "right\n",
	"flags/wrong.txt":  "wrong\n",
	"flags/end2":       "end2 file\n",
	"flags/adir/x.txt": "x\n",
	"hdr/.htaccess":    "Header always set X-Always yes\nHeader set X-Success yes\nHeader unset X-Powered-By\nErrorDocument 404 \"Nothing here\"\n",
	"hdr/a.txt":        "hdr\n",
	"hdr/p.php":        "<?php header('X-Powered-By: PHP/8'); echo 'p';",
	"https/.htaccess":  "RewriteEngine On\nRewriteCond %{HTTPS} off\nRewriteRule ^(.*)$ https://%{HTTP_HOST}%{REQUEST_URI} [L,R=301]\n",
	"app/.htaccess":    "RewriteEngine On\nRewriteCond %{REQUEST_FILENAME} !-f\nRewriteRule ^(.*)$ index.php?route=$1 [L,QSA]\n",
	"app/index.php":    "<?php echo 'route=', $_GET['route'] ?? '', ' page=', $_GET['page'] ?? '', ' uri=', $_SERVER['REQUEST_URI'], ' script=', $_SERVER['SCRIPT_NAME'];",
}

// writeHtaccessTree lays the tree out in a directory every user can read
// (PHP runs as www-data under root), with the password file beside it.
func writeHtaccessTree(t *testing.T) string {
	t.Helper()
	base := testbed.PublicDir(t)
	root := filepath.Join(base, "www")
	htpasswd := filepath.Join(base, "htpasswd")
	// htpasswd -nbB alice s3cret / -nbm bob hunter2
	write(t, htpasswd, "alice:$2y$05$5plduZUS7FZDy9xLB5/wcevkyaDFwBbT//BRmRdsDUfEeilKvW9zG\nbob:$apr1$I1UkS9PS$MZWZuYG26JHi.blv9QTEs1\n")
	for name, body := range htaccessTree {
		write(t, filepath.Join(root, name), strings.ReplaceAll(body, "HTPASSWD", htpasswd))
	}
	return root
}

func write(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// htaccessRamjet serves root in docroot mode with only its .htaccess
// files (no front controller).
func htaccessRamjet(t *testing.T, root string) *testbed.Ramjet {
	t.Helper()
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`defaults:
  docroot:
    root: %q
    front_controller: ""
    htaccess: on
    php:
      workers: 2
`, root))
	return startRamjet(t, "", "--config", cfg)
}

// htaccessApache serves root with Apache 2.4 + php-fpm and AllowOverride
// All: the behaviour ramjet's is compared with.
func htaccessApache(t *testing.T, root string) *testbed.Apache {
	t.Helper()
	fpm := testbed.StartPHPFPM(t, "")
	cfg := testbed.ApacheOrigin(t, fpm.Addr, fmt.Sprintf(`	DocumentRoot %[1]s
	DirectoryIndex index.php index.html
	<Directory %[1]s>
		AllowOverride All
		Require all granted
	</Directory>
`, root))
	cfg.Modules = append(cfg.Modules, "access_compat", "auth_basic", "authn_core", "authn_file", "authz_user", "authz_host", "expires")
	return testbed.StartApache(t, cfg)
}

// expectStatus is what a case of TestHtaccessMatchesApache is about,
// checked on Apache's answer so that no case passes by both servers
// missing its fixture alike.
func expectStatus(name string) int {
	for _, c := range []struct {
		in     string
		status int
	}{
		{"RedirectMatch", 302}, {"redirect", 301}, {"Redirect", 301}, {"condition capture", 302},
		{"host canonicalisation", 301}, {"directory slash", 301}, {"HTTPS redirect", 301},
		{"forbidden", 403}, {"Deny from all", 403}, {"uploads: no PHP", 403}, {"FilesMatch deny", 403},
		{"env=, not set", 403}, {"gone", 410}, {"loop", 500}, {"404", 404}, {"ErrorDocument text", 404},
		{"without credentials", 401}, {"wrong password", 401}, {"asks for a password", 401},
	} {
		if strings.Contains(name, c.in) {
			return c.status
		}
	}
	return 200
}

// TestHtaccessMatchesApache sends the same requests to Apache and to
// ramjet serving one tree and compares what a client sees: status,
// Location, the body of what is served, and the headers the files set.
func TestHtaccessMatchesApache(t *testing.T) {
	root := writeHtaccessTree(t)
	rj := htaccessRamjet(t, root)
	ap := htaccessApache(t, root)
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	auth := "Authorization: Basic YWxpY2U6czNjcmV0" // alice:s3cret
	tests := []struct {
		name, path string
		hdr        []string
		body       bool     // compare bodies (error pages differ in wording)
		headers    []string // compare these headers
	}{
		{"external redirect with capture", "/old/a/b?x=1", nil, false, nil},
		{"QSA appends the query", "/qsa?orig=2", nil, true, nil},
		{"pretty URL to a script", "/pretty/widgets/", nil, true, nil},
		{"forbidden agent", "/show.php", []string{"User-Agent: badbot/1"}, false, nil},
		{"gone", "/gone", nil, false, nil},
		{"condition capture, query dropped", "/item?id=42", nil, false, nil},
		{"E= reaches PHP as REDIRECT_", "/env", nil, true, nil},
		{"front-controller rule", "/blog/2024/post", nil, true, nil},
		{"existing file not rewritten", "/notfound.html", nil, true, nil},
		{"host canonicalisation", "/page?q=1", []string{"Host: www.site.test"}, false, nil},
		{"Redirect", "/moved/x?y=1", nil, false, nil},
		{"RedirectMatch", "/archive/2024", nil, false, nil},
		{"ErrorDocument 404 local", "/missing.txt", nil, true, nil},
		{"Basic auth without credentials", "/private/", nil, false, []string{"WWW-Authenticate"}},
		{"Basic auth, wrong password", "/private/", []string{"Authorization: Basic YWxpY2U6bm9wZQ=="}, false, []string{"WWW-Authenticate"}},
		{"Basic auth, bcrypt", "/private/", []string{auth}, true, nil},
		{"Basic auth, apr1", "/private/index.html", []string{"Authorization: Basic Ym9iOmh1bnRlcjI="}, true, nil},
		{"Deny from all", "/denied/a.txt", nil, false, nil},
		{"uploads: no PHP", "/uploads/evil.php", nil, false, nil},
		{"uploads: files served", "/uploads/ok.txt", nil, true, nil},
		{"ExpiresByType and Header", "/static/a.css", nil, true, []string{"Cache-Control", "X-Static"}},
		{"AddType", "/static/f.cst", nil, true, []string{"Content-Type", "X-Static"}},
		{"relative rule in a subdirectory", "/sub/x", nil, true, nil},
		{"directory slash", "/sub", nil, false, nil},
		{"RewriteOptions Inherit, own rule", "/inherit/z", nil, true, nil},
		{"RewriteOptions Inherit, parent rule redirects", "/inherit/old/q", nil, false, nil},
		{"rewrite loop", "/loop/a", nil, false, nil},
		{"FilesMatch deny", "/files/dump.sql", nil, false, nil},
		{"FilesMatch other file", "/files/readme.txt", nil, true, nil},
		{"DirectoryIndex", "/index/", nil, true, nil},
		{"index.php", "/", nil, true, nil},
		{"Allow from env=, not set", "/envgate/a.txt", nil, false, nil},
		{"Allow from env=, set by SetEnvIf", "/envgate/a.txt", []string{"User-Agent: TrustedBot"}, true, nil},
		{"Satisfy Any, asks for a password", "/any/a.txt", nil, false, []string{"WWW-Authenticate"}},
		{"Satisfy Any, password", "/any/a.txt", []string{auth}, true, nil},
		{"LimitExcept GET: GET", "/limit/a.txt", nil, true, nil},
		{"S=1 skips a rule", "/flags/skip", nil, true, nil},
		{"C: a failed chain skips its rules", "/flags/chain", nil, true, nil},
		{"QSD drops the query", "/flags/qsd?a=1", nil, true, nil},
		{"END stops the next round", "/flags/end", nil, true, nil},
		{"NC", "/flags/NC", nil, true, nil},
		{"-d", "/flags/adir/", nil, true, nil},
		{"directory slash before the rules", "/flags/adir", nil, false, nil},
		{"B escapes the back-reference", "/flags/b/a&b", nil, true, nil},
		{"T= sets the type", "/flags/typed", nil, true, []string{"Content-Type"}},
		{"Header always / set", "/hdr/a.txt", nil, true, []string{"X-Always", "X-Success"}},
		{"Header unset on a script's header", "/hdr/p.php", nil, true, []string{"X-Powered-By", "X-Success"}},
		{"ErrorDocument text, Header always on the error", "/hdr/none.txt", nil, true, []string{"X-Always", "X-Success"}},
		{"HTTPS redirect", "/https/a/b?c=d", nil, false, nil},
		{"framework front controller with QSA", "/app/users/42?page=2", nil, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := append([]string{"Host: site.test"}, tt.hdr...)
			want := get(t, c, ap.URL+tt.path, hdr...)
			if wantStatus := expectStatus(tt.name); want.Status != wantStatus {
				t.Fatalf("Apache answered %d, the case expects %d: the tree is not what the case means\n%.300q", want.Status, wantStatus, want.Body)
			}
			got := get(t, c, rj.URL+tt.path, hdr...)
			if got.Status != want.Status {
				t.Fatalf("status %d, Apache %d\nramjet body %.300q\nApache body %.300q", got.Status, want.Status, got.Body, want.Body)
			}
			if g, w := got.Header.Get("Location"), want.Header.Get("Location"); g != w {
				t.Errorf("Location %q, Apache %q", g, w)
			}
			if tt.body && string(got.Body) != string(want.Body) {
				t.Errorf("body:\n%s\nApache:\n%s", got.Body, want.Body)
			}
			for _, h := range tt.headers {
				g, w := got.Header.Get(h), want.Header.Get(h)
				if h == "Content-Type" { // ramjet adds "; charset=utf-8" to text types, Apache's AddType does not
					g, _, _ = strings.Cut(g, ";")
					w, _, _ = strings.Cut(w, ";")
				}
				if g != w {
					t.Errorf("%s %q, Apache %q", h, g, w)
				}
			}
		})
	}
	if n := ap.Requests("/loop/a"); n == 0 {
		t.Logf("apache logged no /loop/a line")
	}
}

// lscacheBlock is what the LiteSpeed Cache plugin writes into a site's
// .htaccess (its rules, as ../shared/reference.md lists them), with a
// do-not-cache cookie and user agent and a login vary cookie configured.
const lscacheBlock = `# BEGIN LSCACHE
<IfModule LiteSpeed>
RewriteEngine on
CacheLookup on
RewriteRule .* - [E=Cache-Control:no-autoflush]
RewriteRule litespeed/debug/.*\.log$ - [F,L]
RewriteRule \.litespeed_conf\.dat - [F,L]
RewriteCond %{REQUEST_URI} /wp-admin/admin-ajax\.php
RewriteCond %{QUERY_STRING} action=async_litespeed
RewriteRule .* - [E=noabort:1]
RewriteCond %{HTTP_USER_AGENT} Mobile|Android|Silk/|Kindle|BlackBerry|Opera\ Mini|Opera\ Mobi [NC]
RewriteRule .* - [E=Cache-Control:vary=%{ENV:LSCACHE_VARY_VALUE}+ismobile]
RewriteCond %{HTTP_COOKIE} rj_nocache
RewriteRule .* - [E=Cache-Control:no-cache]
RewriteCond %{HTTP_USER_AGENT} NoCacheBot [NC]
RewriteRule .* - [E=Cache-Control:no-cache]
RewriteRule .? - [E="Cache-Vary:wp_lang"]
CacheKeyModify -qs:fbclid
CacheKeyModify -qs:utm*
</IfModule>
# END LSCACHE
`

const (
	mobileUA  = "User-Agent: Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Mobile Safari/537.36"
	desktopUA = "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0"
)

// TestHtaccessProxyModeLiteSpeedRules: in front of nginx, htaccess_root
// makes the plugin's rules work as on LiteSpeed: mobile visitors get
// their own cached variant and the origin hears the vary value,
// do-not-cache cookies and agents bypass, the vary cookie splits the
// cache, dropped query parameters share one entry.
func TestHtaccessProxyModeLiteSpeedRules(t *testing.T) {
	o := startOrigin(t)
	root := testbed.PublicDir(t)
	browserCache := "<IfModule mod_expires.c>\nExpiresActive on\nExpiresByType text/css A31557600\n</IfModule>\n"
	write(t, filepath.Join(root, ".htaccess"), lscacheBlock+browserCache+"Deny from all\nRewriteRule ^ - [F]\n")
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("hosts:\n  - names: [site.test]\n    htaccess_root: %q\n", root))
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := &http.Client{Timeout: 10 * time.Second}
	page := rj.URL + "/e/lsvary?h[]=Cache-Control:+public,+max-age=300"
	host := "Host: site.test"
	id := func(r result) string {
		for _, l := range strings.Split(string(r.Body), "\n") {
			if v, ok := strings.CutPrefix(l, "id: "); ok {
				return v
			}
		}
		return ""
	}
	desk := get(t, c, page, host, desktopUA, "X-LSCACHE-VARY-VALUE: forged")
	mustStatus(t, desk, 200, "desktop (the .htaccess rules outside the LiteSpeed block are the origin's)")
	if strings.Contains(string(desk.Body), "hdr.X-Lscache-Vary-Value") {
		t.Fatalf("a client's own X-LSCACHE-VARY-VALUE reached the origin:\n%s", desk.Body)
	}
	mob := get(t, c, page, host, mobileUA)
	if !strings.Contains(mob.Header.Get("Cache-Status"), "miss") || !strings.Contains(string(mob.Body), "hdr.X-Lscache-Vary-Value: ismobile") {
		t.Fatalf("mobile: Cache-Status %q, origin saw:\n%s", mob.Header.Get("Cache-Status"), mob.Body)
	}
	for _, tt := range []struct {
		name string
		hdr  []string
		same result
	}{
		{"mobile again", []string{mobileUA}, mob},
		{"desktop again", []string{desktopUA}, desk},
		{"desktop, tracking parameter dropped", []string{desktopUA}, desk},
	} {
		url := page
		if strings.Contains(tt.name, "tracking") {
			url += "&utm_source=mail&fbclid=x"
		}
		r := get(t, c, url, append([]string{host}, tt.hdr...)...)
		if r.Header.Get("Cache-Status") != "ramjet; hit" || id(r) != id(tt.same) {
			t.Errorf("%s: Cache-Status %q, id %s want %s", tt.name, r.Header.Get("Cache-Status"), id(r), id(tt.same))
		}
	}
	for _, h := range []string{"Cookie: rj_nocache=1", "User-Agent: nocachebot/2"} {
		if r := get(t, c, page, host, h); r.Header.Get("Cache-Status") != "ramjet; fwd=bypass" {
			t.Errorf("%s: Cache-Status %q, want a bypass", h, r.Header.Get("Cache-Status"))
		}
	}
	fr := get(t, c, page, host, desktopUA, "Cookie: wp_lang=fr")
	if cs := fr.Header.Get("Cache-Status"); strings.Contains(cs, "hit") || id(fr) == id(desk) {
		t.Errorf("vary cookie wp_lang=fr: Cache-Status %q: served the default variant", cs)
	}
	if r := get(t, c, rj.URL+"/wp-content/litespeed/debug/debug.log", host); r.Status != 403 {
		t.Errorf("plugin debug log: status %d, want 403", r.Status)
	}
	css := get(t, c, rj.URL+"/e/style?ctype=text/css", host)
	if cc := css.Header.Get("Cache-Control"); cc != "max-age=31557600" || css.Header.Get("Expires") == "" {
		t.Errorf("the plugin's ExpiresByType on a stylesheet from nginx: Cache-Control %q, Expires %q", cc, css.Header.Get("Expires"))
	}
}

// TestHtaccessDocrootLiteSpeedRules: in docroot mode the same block
// reaches PHP as LiteSpeed passes it (LSCACHE_VARY_VALUE) and keys the
// cache.
func TestHtaccessDocrootLiteSpeedRules(t *testing.T) {
	root := writeHtaccessTree(t)
	write(t, filepath.Join(root, ".htaccess"), lscacheBlock+htaccessTree[".htaccess"])
	write(t, filepath.Join(root, "vary.php"), `<?php
header('X-LiteSpeed-Cache-Control: public,max-age=300');
echo 'env=', $_SERVER['LSCACHE_VARY_VALUE'] ?? '', ' hdr=', $_SERVER['HTTP_X_LSCACHE_VARY_VALUE'] ?? '', ' t=', hrtime(true), "\n";
`)
	rj := htaccessRamjet(t, root)
	c := &http.Client{Timeout: 10 * time.Second}
	mob := get(t, c, rj.URL+"/vary.php", mobileUA)
	if !strings.HasPrefix(string(mob.Body), "env=ismobile hdr=ismobile ") {
		t.Fatalf("mobile: PHP saw %q", mob.Body)
	}
	desk := get(t, c, rj.URL+"/vary.php", desktopUA)
	if !strings.HasPrefix(string(desk.Body), "env= hdr= ") {
		t.Fatalf("desktop: PHP saw %q", desk.Body)
	}
	if r := get(t, c, rj.URL+"/vary.php", mobileUA); r.Header.Get("Cache-Status") != "ramjet; hit" || string(r.Body) != string(mob.Body) {
		t.Fatalf("mobile again: %q %q", r.Header.Get("Cache-Status"), r.Body)
	}
	if r := get(t, c, rj.URL+"/vary.php", desktopUA, "Cookie: rj_nocache=1"); r.Header.Get("Cache-Status") != "ramjet; fwd=bypass" {
		t.Fatalf("no-cache cookie: %q", r.Header.Get("Cache-Status"))
	}
	// A protected page is never answered from the cache without its password.
	get(t, c, rj.URL+"/private/", "Authorization: Basic YWxpY2U6czNjcmV0")
	if r := get(t, c, rj.URL+"/private/"); r.Status != 401 {
		t.Fatalf("protected page without credentials: %d", r.Status)
	}
}

// TestHtaccessChangesApplyLiveAndErrorsStayInTheirDirectory: an edit is
// in force on the next request (within the one-second stat interval), no
// reload; a file that does not parse answers 500 under its own directory
// only, with FILE:LINE in the log.
func TestHtaccessChangesApplyLiveAndErrorsStayInTheirDirectory(t *testing.T) {
	root := writeHtaccessTree(t)
	rj := htaccessRamjet(t, root)
	c := &http.Client{Timeout: 10 * time.Second}
	mustStatus(t, get(t, c, rj.URL+"/uploads/ok.txt"), 200, "before")
	name := filepath.Join(root, "uploads/.htaccess")
	write(t, name, "Require all denied\n")
	if !testbed.Poll(5*time.Second, func() bool { return get(t, c, rj.URL+"/uploads/ok.txt").Status == 403 }) {
		t.Fatal("the new Require all denied was not in force within 5 s")
	}
	write(t, name, "RewriteEngine On\nRewriteRule ^(broken$ - [F]\n")
	if !testbed.Poll(5*time.Second, func() bool { return get(t, c, rj.URL+"/uploads/ok.txt").Status == 500 }) {
		t.Fatal("a syntax error did not answer 500 within 5 s")
	}
	mustStatus(t, get(t, c, rj.URL+"/sub/x"), 200, "another directory")
	mustStatus(t, get(t, c, rj.URL+"/pretty/ok"), 200, "the root")
	rj.WaitOutput(t, 0, name+":2: RewriteRule: cannot compile regular expression", 5*time.Second)
}

// TestCheckHtaccess: ramjet check --htaccess prints every problem of a
// tree, FILE:LINE first, and fails on errors and fail-closed rules.
func TestCheckHtaccess(t *testing.T) {
	root := writeHtaccessTree(t)
	code, out := testbed.RunRamjet(t, 20*time.Second, "check", "--htaccess", root)
	if code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("clean tree: exit %d\n%s", code, out)
	}
	write(t, filepath.Join(root, "sub/.htaccess"), "RewriteEngine On\nRewriteRule ^x$ y [Q]\nAddHandler cgi-script .cgi\n")
	write(t, filepath.Join(root, "denied/.htaccess"), "Require host example.com\n")
	code, out = testbed.RunRamjet(t, 20*time.Second, "check", "--htaccess", root)
	for _, want := range []string{
		filepath.Join(root, "sub/.htaccess") + `:2: RewriteRule: unknown flag "Q"`,
		filepath.Join(root, "denied/.htaccess") + ":1: Require host is not supported (fails closed",
		"warning: " + filepath.Join(root, "sub/.htaccess") + ":3: AddHandler is not supported: ignored",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// TestDocrootUserIniIsReadByPHP: what php_value lines in .htaccess would
// set goes in .user.ini, which php-cgi reads itself (per directory, as
// PHP's CGI/FastCGI SAPI does); the .htaccess lines are warned about.
func TestDocrootUserIniIsReadByPHP(t *testing.T) {
	root := writeHtaccessTree(t)
	write(t, filepath.Join(root, "ini/.user.ini"), "precision = 5\n")
	write(t, filepath.Join(root, "ini/show.php"), "<?php echo ini_get('precision');")
	write(t, filepath.Join(root, "ini/.htaccess"), "php_value precision 7\n")
	rj := htaccessRamjet(t, root)
	r := get(t, &http.Client{Timeout: 10 * time.Second}, rj.URL+"/ini/show.php")
	if string(r.Body) != "5" {
		t.Fatalf("precision %q, want 5 from .user.ini", r.Body)
	}
	rj.WaitOutput(t, 0, "php_value/php_flag: php-cgi takes no per-request settings", 5*time.Second)
}

// TestHtaccessProxyFlagOnlyToConfiguredOrigins: RewriteRule [P] fetches
// from an origin the configuration names, never from one a .htaccess
// writer picks.
func TestHtaccessProxyFlagOnlyToConfiguredOrigins(t *testing.T) {
	o := startOrigin(t)
	root := writeHtaccessTree(t)
	write(t, filepath.Join(root, "api/.htaccess"), fmt.Sprintf("RewriteEngine On\nRewriteRule ^v1/(.*)$ %s/e/$1 [P,QSA]\nRewriteRule ^out$ http://203.0.113.9/steal [P]\n", o.URL))
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`origin:
  servers: [%q]
defaults:
  docroot:
    root: %q
    front_controller: ""
    php:
      workers: 1
`, o.URL, root))
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := &http.Client{Timeout: 10 * time.Second}
	r := get(t, c, rj.URL+"/api/v1/proxied?body=via-p")
	if r.Status != 200 || !strings.Contains(string(r.Body), "uri: /e/proxied?body=via-p") {
		t.Fatalf("[P] to the origin: %d\n%s", r.Status, r.Body)
	}
	if r := get(t, c, rj.URL+"/api/out"); r.Status != 502 {
		t.Fatalf("[P] elsewhere: %d, want 502", r.Status)
	}
}

// TestHtaccessRewriteStaysInTheDocroot: a rewritten path is confined as
// a requested one: no climbing out, no dotfiles, PHP only from .php
// files that exist.
func TestHtaccessRewriteStaysInTheDocroot(t *testing.T) {
	root := writeHtaccessTree(t)
	write(t, filepath.Join(filepath.Dir(root), "outside.txt"), "OUTSIDE\n")
	write(t, filepath.Join(root, ".env"), "SECRET=1\n")
	write(t, filepath.Join(root, "jail/.htaccess"), `RewriteEngine On
RewriteRule ^climb$ ../../outside.txt [L]
RewriteRule ^climb2$ /%2e%2e/outside.txt [L,NE]
RewriteRule ^dot$ /.env [L]
RewriteRule ^src$ /uploads/ok.txt/x.php [L]
RewriteRule ^jpg$ /uploads/ok.txt [L,T=application/x-httpd-php]
`)
	rj := htaccessRamjet(t, root)
	c := &http.Client{Timeout: 10 * time.Second}
	for path, want := range map[string]int{"/jail/climb": 404, "/jail/climb2": 404, "/jail/dot": 403, "/jail/src": 404, "/jail/jpg": 200} {
		r := get(t, c, rj.URL+path)
		if r.Status != want || strings.Contains(string(r.Body), "OUTSIDE") || strings.Contains(string(r.Body), "SECRET") {
			t.Errorf("%s: %d %q, want %d", path, r.Status, r.Body, want)
		}
	}
	if r := get(t, c, rj.URL+"/jail/jpg"); string(r.Body) != "upload\n" {
		t.Errorf("T=application/x-httpd-php ran a text file? %q", r.Body)
	}
}
