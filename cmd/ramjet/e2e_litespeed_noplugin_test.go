package main_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// LiteSpeed's cache rules for applications without its plugin, as its
// documentation gives them (docs.litespeedtech.com/lscache/noplugin and
// its Craft CMS page): rewrite rules on %{ORG_REQ_URI}, the original
// request URI, and Apache-style cache directives.
const (
	// craftRecipe caches every page for 8 hours but the control panel.
	craftRecipe = `########## Begin - Litespeed cache
<IfModule LiteSpeed>
  RewriteEngine On
  RewriteCond %{ORG_REQ_URI} !/admin
  RewriteCond %{ORG_REQ_URI} !/index.php/admin
  RewriteRule .* - [E=Cache-Control:max-age=28800]
</IfModule>
########## End - Litespeed cache
`
	// enableRecipe turns the public cache on for the site but its
	// account pages.
	enableRecipe = `<IfModule LiteSpeed>
CacheEnable public /
CacheDisable public /e/account
</IfModule>
`
	// ignoreRecipe caches for two minutes whatever Cache-Control the
	// application sends.
	ignoreRecipe = `<IfModule LiteSpeed>
CacheEnable public / max-age=120
CacheIgnoreCacheControl On
</IfModule>
`
	// typoRecipe misspells ORG_REQ_URI: before, the unknown variable
	// was "" and the exclusion matched every URL, the admin included.
	typoRecipe = `<IfModule LiteSpeed>
RewriteEngine On
RewriteCond %{ORG_REQ_URL} !/admin
RewriteRule .* - [E=Cache-Control:max-age=120]
</IfModule>
`
)

// TestLiteSpeedNoPluginRulesInProxyMode: in front of nginx (htaccess_root),
// LiteSpeed's no-plugin recipes cache as on LiteSpeed: the Craft recipe's
// admin exclusion holds (before: every /admin page was stored and served
// to the next visitor), CacheEnable stores pages the application sends no
// cache headers for (before: ignored with a warning, nothing stored) but
// not one it marks no-cache nor a CacheDisable'd one,
// CacheIgnoreCacheControl stores despite no-cache, and a rule on an
// unknown variable bypasses the cache (before: cached, admin included).
func TestLiteSpeedNoPluginRulesInProxyMode(t *testing.T) {
	o := startOrigin(t)
	var hosts strings.Builder
	for name, rules := range map[string]string{"craft": craftRecipe, "enable": enableRecipe, "ignore": ignoreRecipe, "typo": typoRecipe} {
		root := testbed.PublicDir(t)
		write(t, filepath.Join(root, ".htaccess"), rules)
		fmt.Fprintf(&hosts, "  - names: [%s.test]\n    htaccess_root: %q\n", name, root)
	}
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "hosts:\n"+hosts.String()))
	c := &http.Client{Timeout: 10 * time.Second}
	twice := func(host, path string) (first, second result) {
		first = get(t, c, rj.URL+path, "Host: "+host)
		mustStatus(t, first, 200, host+path)
		return first, get(t, c, rj.URL+path, "Host: "+host)
	}
	cached := func(host, path string) {
		t.Helper()
		first, second := twice(host, path)
		if second.Header.Get("Cache-Status") != "ramjet; hit" || second.ID() != first.ID() {
			t.Errorf("%s%s: second answer %q (id %s, first %s), want a hit of the first", host, path, second.Header.Get("Cache-Status"), second.ID(), first.ID())
		}
	}
	notCached := func(host, path, status string) {
		t.Helper()
		first, second := twice(host, path)
		if second.ID() == first.ID() || strings.Contains(second.Header.Get("Cache-Status"), "hit") || !strings.HasPrefix(second.Header.Get("Cache-Status"), status) {
			t.Errorf("%s%s: second answer %q (id %s, first %s), want %q from the origin", host, path, second.Header.Get("Cache-Status"), second.ID(), first.ID(), status)
		}
	}
	cached("craft.test", "/e/blog/hello")
	notCached("craft.test", "/e/admin/entries", "ramjet; fwd=")
	notCached("craft.test", "/e/%61dmin/entries", "ramjet; fwd=") // an encoded letter does not slip past it

	cached("enable.test", "/e/en-page")
	notCached("enable.test", "/e/en-nocache?h[]=Cache-Control:+no-cache", "ramjet; fwd=")
	notCached("enable.test", "/e/account/orders", "ramjet; fwd=")
	cached("enable.test", "/e/en-app-says?h[]=Cache-Control:+public,+max-age=60")

	cached("ignore.test", "/e/ig-nocache?h[]=Cache-Control:+no-cache,+no-store,+private")

	notCached("typo.test", "/e/admin/users", "ramjet; fwd=bypass")
	notCached("typo.test", "/e/typo-page", "ramjet; fwd=bypass")
	rj.WaitOutput(t, 0, ".htaccess:3: RewriteCond reads %{ORG_REQ_URL}, a variable ramjet does not know (fails closed", 5*time.Second)
}

// TestLiteSpeedNoPluginRulesInDocrootMode: in docroot mode the recipe's
// %{ORG_REQ_URI} is the URL asked for, before the front controller's
// rewrite (before: "", so /admin pages were cached); a rule on an
// unknown variable is not cached, and an [F] on one refuses (before:
// "" never equalled "yes", so the file was served).
func TestLiteSpeedNoPluginRulesInDocrootMode(t *testing.T) {
	root := testbed.PublicDir(t)
	write(t, filepath.Join(root, ".htaccess"), `<IfModule LiteSpeed>
CacheLookup on
RewriteEngine On
RewriteCond %{REQUEST_METHOD} ^HEAD|GET$
RewriteCond %{ORG_REQ_URI} !/admin
RewriteRule .* - [E=Cache-Control:max-age=120]
</IfModule>
RewriteEngine On
RewriteCond %{REQUEST_FILENAME} !-f
RewriteRule ^ index.php [L]
`)
	write(t, filepath.Join(root, "index.php"), "<?php echo $_SERVER['REQUEST_URI'], ' ', hrtime(true), \"\\n\";\n")
	write(t, filepath.Join(root, "legacy/.htaccess"), `<IfModule LiteSpeed>
RewriteEngine On
RewriteCond %{ORG_REQ_URL} !/admin
RewriteRule .* - [E=Cache-Control:max-age=120]
RewriteCond %{HTTP_X_NOPE}%{NO_SUCH_VAR} =yes
RewriteRule ^secret\.txt$ - [F]
</IfModule>
`)
	write(t, filepath.Join(root, "legacy/page.php"), "<?php echo hrtime(true), \"\\n\";\n")
	write(t, filepath.Join(root, "legacy/secret.txt"), "secret\n")
	rj := htaccessRamjet(t, root)
	c := &http.Client{Timeout: 10 * time.Second}

	blog := get(t, c, rj.URL+"/blog/hello")
	mustStatus(t, blog, 200, "/blog/hello")
	if r := get(t, c, rj.URL+"/blog/hello"); r.Header.Get("Cache-Status") != "ramjet; hit" || string(r.Body) != string(blog.Body) {
		t.Errorf("/blog/hello again: %q %q, want a hit of %q", r.Header.Get("Cache-Status"), r.Body, blog.Body)
	}
	admin := get(t, c, rj.URL+"/admin/login")
	mustStatus(t, admin, 200, "/admin/login")
	if r := get(t, c, rj.URL+"/admin/login"); strings.Contains(r.Header.Get("Cache-Status"), "hit") || string(r.Body) == string(admin.Body) {
		t.Errorf("/admin/login again: %q %q: the admin exclusion was lost", r.Header.Get("Cache-Status"), r.Body)
	}
	page := get(t, c, rj.URL+"/legacy/page.php")
	mustStatus(t, page, 200, "/legacy/page.php")
	if r := get(t, c, rj.URL+"/legacy/page.php"); r.Header.Get("Cache-Status") != "ramjet; fwd=bypass" || string(r.Body) == string(page.Body) {
		t.Errorf("/legacy/page.php again: %q %q, want a bypass (a rule reads an unknown variable)", r.Header.Get("Cache-Status"), r.Body)
	}
	mustStatus(t, get(t, c, rj.URL+"/legacy/secret.txt"), 403, "[F] on an unknown variable")

	code, out := testbed.RunRamjet(t, 20*time.Second, "check", "--htaccess", root)
	for _, want := range []string{
		filepath.Join(root, "legacy/.htaccess") + ":3: RewriteCond reads %{ORG_REQ_URL}, a variable ramjet does not know (fails closed",
		filepath.Join(root, "legacy/.htaccess") + ":5: RewriteCond reads %{NO_SUCH_VAR}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ramjet check output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 || strings.Contains(out, filepath.Join(root, ".htaccess")+":") {
		t.Errorf("ramjet check: exit %d, want 1 for legacy/ only:\n%s", code, out)
	}
}
