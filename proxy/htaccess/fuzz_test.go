package htaccess

import (
	"os"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	wp, _ := os.ReadFile("testdata/wordpress.htaccess")
	f.Add(string(wp), false)
	f.Add(string(wp), true)
	f.Add("<Files x>\n<RequireAll>\nRequire not ip 1.2\n</RequireAll>\n</Files>\n", false)
	f.Add("RewriteRule \"a b\" 'c d' [E=\"x:y,z\",CO=a:b:c:1:/:1:1]\n", false)
	f.Add("<If \"x\">\nRequire all denied\n</If>\nOrder allow,deny\nAllow from 10.1 env=!X\n", false)
	f.Add("<IfModule mod_php7.c>\nphp_flag engine 0\n</IfModule>\nAddHandler cgi-script .php .pl\nOptions -ExecCGI\n", false)
	f.Add("<FilesMatch \"\\.php$\">\nSetHandler none\n</FilesMatch>\nRemoveHandler .php\nRemoveType\nphp_value engine\n", false)
	f.Add("SetHandler\nAddHandler x\nAddType text/plain .PHP\nphp_admin_flag engine off\n", true)
	f.Add(craftRules, true)
	f.Add("CacheEnable private /a max-age=60\nCacheDisable public /\nCacheIgnoreCacheControl on\nRewriteCond %{NOPE} x\nRewriteRule ^ - [F]\n", false)
	f.Add("<IfModule LiteSpeed>\nCacheEnable public max-age=\nRewriteCond %{SSL:X}%{ORG_REQ_URI %{LA-U:Y}\nRewriteRule ^ - [E=Cache-Control:max-age=1]\n</IfModule>\n", true)
	f.Fuzz(func(t *testing.T, src string, proxyOnly bool) {
		p := Parse("f", []byte(src), proxyOnly)
		for _, e := range p.Errs {
			if !strings.HasPrefix(e.Error(), "f:") {
				t.Fatalf("error without its file: %v", e)
			}
		}
	})
}

// FuzzEval runs fuzzed rules against fuzzed paths: no panic, a bounded
// number of rounds, and a rewritten path is always a clean path from
// the root (the docroot confines it further).
func FuzzEval(f *testing.F) {
	wp, _ := os.ReadFile("testdata/wordpress.htaccess")
	f.Add(string(wp), "/hello-world/", "q=1", "Mozilla Mobile")
	f.Add("RewriteEngine On\nRewriteRule ^(.*)$ ../../$1 [L]\n", "/etc/passwd", "", "")
	f.Add("RewriteEngine On\nRewriteRule ^(.*)$ /%2e%2e/$1?x [QSA,N]\n", "/a/b", "y=2", "")
	f.Add("RewriteEngine On\nRewriteCond %{QUERY_STRING} (.*)\nRewriteRule (.*) /x/%1/$1 [B,R=301]\n", "/a b", "c&d", "")
	f.Add("<Files *.php>\nSetHandler none\n</Files>\nphp_flag engine on\n", "/sub/f.php", "", "")
	f.Add(craftRules, "/admin/x", "p=1", "")
	f.Add("CacheEnable public /sub\nCacheDisable private\nRewriteEngine On\nRewriteCond %{ORG_REQ_URI}%{NOPE} !/admin [OR]\nRewriteCond %{ORG_QUERY_STRING} x\nRewriteRule ^(.*)$ - [E=Cache-Control:private,C]\nRewriteRule ^ /x [G]\n", "/sub/f.txt", "x", "")
	f.Fuzz(func(t *testing.T, rules, path, query, ua string) {
		tr, _ := newTree(t, map[string]string{".htaccess": rules, "sub/.htaccess": rules, "sub/f.txt": "x"})
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		o := &Outcome{}
		r := request("GET /", hdr{"User-Agent": ua})
		r.Path, r.Query = []byte(path), []byte(query)
		tr.Eval(r, o)
		if cause, off := o.PHPOff(); off && cause == "" {
			t.Fatal("PHP switched off without a cause")
		}
		if o.Cache.Undecided != "" && (!o.Cache.NoCache || o.Cache.Enabled) {
			t.Fatalf("a rule that could not be decided left the request cacheable: %+v", o.Cache)
		}
		if o.Rounds() > maxRounds+2 {
			t.Fatalf("%d rounds", o.Rounds())
		}
		if o.Status == 0 && o.Rewritten {
			p := string(o.Path)
			if !strings.HasPrefix(p, "/") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
				t.Fatalf("rewritten to %q", p)
			}
		}
	})
}
