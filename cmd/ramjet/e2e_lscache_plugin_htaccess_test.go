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

// stockPluginFiles are the .htaccess files the LiteSpeed Cache plugin 7.9
// writes for each setting that changes it (proxy/htaccess/testdata/
// lscache79: its own writer, run by hand), one site each.
var stockPluginFiles = []string{"mobile", "guest", "webp", "nocache", "vary", "dropqs", "browser", "all"}

// stockPluginRamjet serves one site per stock plugin file in proxy mode in
// front of nginx + php-fpm: <name>.test reads <name>.htaccess.
func stockPluginRamjet(t *testing.T) *testbed.Ramjet {
	t.Helper()
	o := startOrigin(t)
	var hosts strings.Builder
	for _, name := range stockPluginFiles {
		src, err := os.ReadFile(filepath.Join("..", "..", "proxy", "htaccess", "testdata", "lscache79", name+".htaccess"))
		if err != nil {
			t.Fatal(err)
		}
		root := testbed.PublicDir(t)
		write(t, filepath.Join(root, ".htaccess"), string(src))
		fmt.Fprintf(&hosts, "  - names: [%s.test]\n    htaccess_root: %q\n", name, root)
	}
	return startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "hosts:\n"+hosts.String()))
}

const (
	iPhoneUA = "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 13_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
	chromeUA = "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
)

// TestStockPluginHtaccessInProxyMode: behind ramjet in proxy mode, the
// plugin's own files drive the cache as on LiteSpeed. A phone is marked
// ismobile for the origin (before: never, so the plugin refused to cache
// every mobile page: fwd=uri-miss; detail=no-cache), its second request is
// a hit, a desktop never gets its page; the other settings act as the
// plugin means them.
func TestStockPluginHtaccessInProxyMode(t *testing.T) {
	rj := stockPluginRamjet(t)
	c := &http.Client{Timeout: 10 * time.Second}
	page := rj.URL + "/lsmobile.php"
	hit := func(r result) bool { return r.Header.Get("Cache-Status") == "ramjet; hit" }

	for _, site := range []string{"mobile", "guest", "all"} {
		t.Run(site+"/mobile", func(t *testing.T) {
			host := "Host: " + site + ".test"
			phone := get(t, c, page, host, iPhoneUA)
			if e := phone.Echo(); e["mobile"] != "yes" || !strings.Contains(e["vary"], "ismobile") || !strings.Contains(phone.Header.Get("Cache-Status"), "stored") {
				t.Fatalf("phone: Cache-Status %q, origin saw %v", phone.Header.Get("Cache-Status"), e)
			}
			if again := get(t, c, page, host, iPhoneUA); !hit(again) || again.ID() != phone.ID() {
				t.Errorf("phone again: Cache-Status %q id %q, want a hit of %q", again.Header.Get("Cache-Status"), again.ID(), phone.ID())
			}
			desk := get(t, c, page, host, chromeUA)
			if desk.ID() == phone.ID() || desk.Echo()["mobile"] != "no" || strings.Contains(desk.Echo()["vary"], "ismobile") {
				t.Errorf("desktop got %v (Cache-Status %q), the phone's page was %q", desk.Echo(), desk.Header.Get("Cache-Status"), phone.ID())
			}
			if again := get(t, c, page, host, chromeUA); !hit(again) || again.ID() != desk.ID() {
				t.Errorf("desktop again: Cache-Status %q", again.Header.Get("Cache-Status"))
			}
		})
	}
	t.Run("webp", func(t *testing.T) {
		host := "Host: webp.test"
		u := rj.URL + "/e/webp?h[]=Cache-Control:+public,+max-age=300"
		w := get(t, c, u, host, chromeUA, "Accept: image/webp,*/*")
		plain := get(t, c, u, host, chromeUA, "Accept: text/html")
		if w.Echo()["hdr.x-lscache-vary-value"] != "webp" || plain.Echo()["hdr.x-lscache-vary-value"] != "" || w.ID() == plain.ID() {
			t.Errorf("webp: origin saw %q / %q, ids %s %s", w.Echo()["hdr.x-lscache-vary-value"], plain.Echo()["hdr.x-lscache-vary-value"], w.ID(), plain.ID())
		}
		if r := get(t, c, u, host, chromeUA, "Accept: image/webp"); !hit(r) || r.ID() != w.ID() {
			t.Errorf("webp again: %q", r.Header.Get("Cache-Status"))
		}
	})
	t.Run("nocache", func(t *testing.T) {
		host := "Host: nocache.test"
		u := rj.URL + "/e/nocache?h[]=Cache-Control:+public,+max-age=300"
		get(t, c, u, host, chromeUA)
		for _, h := range []string{"Cookie: rj_nocache=1", "User-Agent: NoCacheBot/2.0"} {
			if r := get(t, c, u, host, h); r.Header.Get("Cache-Status") != "ramjet; fwd=bypass" {
				t.Errorf("%s: Cache-Status %q, want a bypass", h, r.Header.Get("Cache-Status"))
			}
		}
		if r := get(t, c, u, host, chromeUA); !hit(r) {
			t.Errorf("anyone else: %q, want a hit", r.Header.Get("Cache-Status"))
		}
	})
	t.Run("vary", func(t *testing.T) {
		host := "Host: vary.test"
		u := rj.URL + "/e/vary?h[]=Cache-Control:+public,+max-age=300"
		plain := get(t, c, u, host, chromeUA)
		dark := get(t, c, u, host, chromeUA, "Cookie: rj_theme=dark")
		if dark.ID() == plain.ID() {
			t.Error("the vary cookie rj_theme=dark got the plain variant")
		}
		if r := get(t, c, u, host, chromeUA, "Cookie: rj_theme=dark"); !hit(r) || r.ID() != dark.ID() {
			t.Errorf("rj_theme=dark again: %q", r.Header.Get("Cache-Status"))
		}
	})
	t.Run("dropqs", func(t *testing.T) {
		host := "Host: dropqs.test"
		u := rj.URL + "/e/dropqs?h[]=Cache-Control:+public,+max-age=300"
		first := get(t, c, u, host, chromeUA)
		if r := get(t, c, u+"&utm_source=mail&fbclid=x&_ga=1", host, chromeUA); !hit(r) || r.ID() != first.ID() {
			t.Errorf("with dropped parameters: %q", r.Header.Get("Cache-Status"))
		}
	})
	t.Run("browser", func(t *testing.T) {
		css := get(t, c, rj.URL+"/e/style?ctype=text/css", "Host: browser.test")
		if cc := css.Header.Get("Cache-Control"); cc != "max-age=31557600" || css.Header.Get("Expires") == "" {
			t.Errorf("a stylesheet: Cache-Control %q, Expires %q", cc, css.Header.Get("Expires"))
		}
	})
}

// TestCheckHtaccessWarnsOfLiteSpeedRulesThatNeverRun: a LiteSpeed block
// with no rewrite engine for its directory is named (a warning: nothing
// is refused); the plugin's own file is ok.
func TestCheckHtaccessWarnsOfLiteSpeedRulesThatNeverRun(t *testing.T) {
	idle := testbed.PublicDir(t)
	write(t, filepath.Join(idle, ".htaccess"), "<IfModule LiteSpeed>\nRewriteCond %{HTTP_USER_AGENT} Mobile\nRewriteRule .* - [E=Cache-Control:vary=ismobile]\n</IfModule>\n")
	code, out := testbed.RunRamjet(t, 20*time.Second, "check", "--htaccess", idle)
	if code != 0 || !strings.Contains(out, "warning: ") || !strings.Contains(out, "never run") {
		t.Errorf("check of a LiteSpeed block without RewriteEngine: exit %d\n%s", code, out)
	}
	plugin := testbed.PublicDir(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "proxy", "htaccess", "testdata", "lscache79", "all.htaccess"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(plugin, ".htaccess"), string(src))
	if code, out := testbed.RunRamjet(t, 20*time.Second, "check", "--htaccess", plugin); code != 0 || strings.Contains(out, "never run") {
		t.Errorf("check of the plugin's own file: exit %d\n%s", code, out)
	}
}
