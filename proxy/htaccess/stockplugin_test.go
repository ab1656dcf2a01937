package htaccess

import (
	"os"
	"strings"
	"testing"
)

// The files in testdata/lscache79 are what the stock LiteSpeed Cache
// plugin 7.9 writes into a WordPress site's .htaccess for each setting
// that changes it (its own src/htaccess.cls.php update(), run by hand; see
// the README there), WordPress's block below them. In proxy mode, as on
// LiteSpeed, their rules run: the plugin turns the rewrite engine on in
// its <IfModule mod_rewrite.c> block, not in the LiteSpeed one.
func TestStockPluginFilesDriveTheCacheInProxyMode(t *testing.T) {
	const (
		phone   = "Mozilla/5.0 (iPhone; CPU iPhone OS 13_7 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
		desktop = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	)
	tests := []struct {
		file, name string
		h          hdr
		vary       string
		noCache    bool
		varyCookie string
		dropQuery  string
	}{
		{"mobile", "a phone is the mobile variant", hdr{"User-Agent": phone}, "ismobile", false, "", ""},
		{"mobile", "a desktop is not", hdr{"User-Agent": desktop}, "", false, "", ""},
		{"guest", "guest mode writes the mobile rule too", hdr{"User-Agent": phone}, "ismobile", false, "", ""},
		{"webp", "an Accept with webp", hdr{"User-Agent": desktop, "Accept": "image/webp,*/*"}, "webp", false, "", ""},
		{"webp", "no webp", hdr{"User-Agent": desktop, "Accept": "text/html"}, "", false, "", ""},
		{"nocache", "a do-not-cache cookie", hdr{"User-Agent": desktop, "Cookie": "a=1; rj_nocache=1"}, "", true, "", ""},
		{"nocache", "a do-not-cache agent", hdr{"User-Agent": "nocachebot/2"}, "", true, "", ""},
		{"nocache", "anyone else", hdr{"User-Agent": desktop}, "", false, "", ""},
		{"vary", "login and vary cookies", hdr{"User-Agent": desktop}, "", false, "rj_theme,_lscache_login", ""},
		{"dropqs", "dropped query parameters", hdr{"User-Agent": desktop}, "", false, "", "fbclid gclid utm* _ga"},
		{"all", "a phone with webp", hdr{"User-Agent": phone, "Accept": "image/webp"}, "ismobile+webp", false, "rj_theme,_lscache_login", "fbclid gclid utm* _ga"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.name, func(t *testing.T) {
			src, err := os.ReadFile("testdata/lscache79/" + tt.file + ".htaccess")
			if err != nil {
				t.Fatal(err)
			}
			c := newClock()
			cfg := c.cfg(writeTree(t, map[string]string{".htaccess": string(src)}))
			cfg.ProxyOnly = true
			tr, err := NewTree(cfg)
			if err != nil {
				t.Fatal(err)
			}
			o := eval(t, tr, "GET /hello-world/", tt.h)
			if o.Status != 0 || o.Rewritten {
				t.Fatalf("status %d rewritten %v: WordPress's own rules are the origin's", o.Status, o.Rewritten)
			}
			if string(o.Cache.Vary) != tt.vary || o.Cache.NoCache != tt.noCache {
				t.Errorf("vary %q nocache %v, want %q %v", o.Cache.Vary, o.Cache.NoCache, tt.vary, tt.noCache)
			}
			if string(o.Cache.VaryCookies) != tt.varyCookie {
				t.Errorf("vary cookies %q, want %q", o.Cache.VaryCookies, tt.varyCookie)
			}
			if got := strings.Join(o.Cache.DropQuery, " "); got != tt.dropQuery {
				t.Errorf("dropped query parameters %q, want %q", got, tt.dropQuery)
			}
		})
	}
}

// ramjet check --htaccess says when a LiteSpeed block's rules can never
// run, and not when the engine is on in the file or a parent's.
func TestCheckWarnsWhenLiteSpeedRulesCannotRun(t *testing.T) {
	block := "<IfModule LiteSpeed>\nRewriteCond %{HTTP_USER_AGENT} Mobile\nRewriteRule .* - [E=Cache-Control:vary=ismobile]\n</IfModule>\n"
	tests := []struct {
		name  string
		files map[string]string
		warn  string // the file warned about, "" none
	}{
		{"engine nowhere", map[string]string{".htaccess": block}, ".htaccess"},
		{"engine in the mod_rewrite block", map[string]string{".htaccess": "<IfModule mod_rewrite.c>\nRewriteEngine on\n</IfModule>\n" + block}, ""},
		{"engine off after", map[string]string{".htaccess": "RewriteEngine on\n" + block + "RewriteEngine off\n"}, ".htaccess"},
		{"engine inherited from the parent", map[string]string{".htaccess": "RewriteEngine on\n", "blog/.htaccess": block}, ""},
		{"parent's engine off", map[string]string{".htaccess": "RewriteEngine off\n", "blog/.htaccess": block}, "blog/.htaccess"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, tt.files)
			p, err := CheckTree(root, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range p.Warnings {
				if strings.Contains(w, "never run") {
					got = append(got, w)
				}
			}
			switch {
			case tt.warn == "" && len(got) > 0:
				t.Errorf("warned %q", got)
			case tt.warn != "" && (len(got) != 1 || !strings.HasPrefix(got[0], root+"/"+tt.warn+":")):
				t.Errorf("warnings %q, want one about %s", got, tt.warn)
			}
		})
	}
}
