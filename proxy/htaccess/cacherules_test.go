package htaccess

import (
	"strings"
	"testing"
)

// craftRules is LiteSpeed's no-plugin recipe for Craft CMS: every page
// cached for 8 hours but the control panel.
const craftRules = `<IfModule LiteSpeed>
  RewriteEngine On
  RewriteCond %{ORG_REQ_URI} !/admin
  RewriteCond %{ORG_REQ_URI} !/index.php/admin
  RewriteRule .* - [E=Cache-Control:max-age=28800]
</IfModule>
<IfModule mod_rewrite.c>
  RewriteEngine On
  RewriteCond %{REQUEST_FILENAME} !-f
  RewriteCond %{REQUEST_FILENAME} !-d
  RewriteRule (.+) index.php?p=$1 [QSA,L]
</IfModule>
`

func TestOrgReqURIKeepsTheAdminExclusionOfTheCraftRecipe(t *testing.T) {
	for _, proxyOnly := range []bool{false, true} {
		tr, _ := newTree(t, map[string]string{".htaccess": craftRules, "index.php": ""})
		tr.cfg.ProxyOnly = proxyOnly
		for _, tt := range []struct {
			line string
			ttl  int64
		}{
			{"GET /blog/post", 28800},
			{"GET /admin/entries", 0},
			{"GET /index.php/admin/login", 0},
		} {
			o := eval(t, tr, tt.line, nil)
			if o.Cache.TTL != tt.ttl || o.Cache.NoCache || o.Cache.Undecided != "" {
				t.Fatalf("proxy %v %s: ttl %d nocache %v undecided %q, want ttl %d", proxyOnly, tt.line, o.Cache.TTL, o.Cache.NoCache, o.Cache.Undecided, tt.ttl)
			}
		}
	}
}

// ORG_REQ_URI is the decoded path the cache key holds: an encoded
// /%61dmin/ cannot slip past an exclusion of /admin.
func TestOrgReqURIIsTheTargetBeforeRewritesWithoutItsQuery(t *testing.T) {
	tr, _ := newTree(t, map[string]string{".htaccess": "RewriteEngine On\n" +
		"RewriteRule ^a$ /b [E=ORG:%{ORG_REQ_URI},E=QS:%{ORG_QUERY_STRING},E=CUR:%{CURRENT_URI}]\n" +
		"RewriteRule ^b$ - [E=LATER:%{ORG_REQ_URI}|%{REQUEST_URI}|%{REQUEST_BASENAME}|%{IS_SUBREQ}]\n", "b": ""})
	r := request("GET /a?x=1", nil)
	r.RequestLine = []byte("GET http://example.com/%61?x=1 HTTP/1.1") // as sent; Path is decoded
	o := &Outcome{}
	tr.Eval(r, o)
	got := map[string]string{}
	o.Env(func(name string, v []byte) { got[name] = string(v) })
	want := map[string]string{"REDIRECT_ORG": "/a", "REDIRECT_QS": "x=1", "REDIRECT_CUR": "/a", "LATER": "/a|/b|b|false"}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s = %q, want %q (env %v)", k, got[k], v, got)
		}
	}
}

func TestUnknownVariableFailsTheRuleClosed(t *testing.T) {
	rules := "RewriteEngine On\n" +
		"RewriteCond %{NO_SUCH_VAR} !/admin\n" +
		"RewriteRule ^ - [E=Cache-Control:max-age=120]\n" +
		"RewriteCond %{SSL:SSL_CIPHER} ^$\n" +
		"RewriteRule ^secret - [F]\n"
	f := Parse("/d/.htaccess", []byte(rules), false)
	if len(f.Errs) != 0 || len(f.Unknown) != 2 ||
		!strings.HasPrefix(f.Unknown[0], "/d/.htaccess:2: RewriteCond reads %{NO_SUCH_VAR}") ||
		!strings.HasPrefix(f.Unknown[1], "/d/.htaccess:4: RewriteCond reads %{SSL:SSL_CIPHER}") {
		t.Fatalf("errs %v unknown %q", f.Errs, f.Unknown)
	}
	tr, _ := newTree(t, map[string]string{".htaccess": rules, "page": "", "secret": ""})
	o := eval(t, tr, "GET /page", nil)
	if o.Status != 0 || o.Cache.TTL != 0 || !o.Cache.NoCache || !strings.HasPrefix(o.Cache.Undecided, tr.root+"/.htaccess:3: RewriteRule reads %{NO_SUCH_VAR}") {
		t.Fatalf("status %d ttl %d nocache %v undecided %q: want not cached, bypassed", o.Status, o.Cache.TTL, o.Cache.NoCache, o.Cache.Undecided)
	}
	if o := eval(t, tr, "GET /secret", nil); o.Status != 403 || !strings.Contains(o.Cause, "%{SSL:SSL_CIPHER}") {
		t.Fatalf("[F] rule with an unknown variable: status %d cause %q, want 403", o.Status, o.Cause)
	}
}

func TestUnknownVariableOutsideTheLiteSpeedBlockIsNotProxyModes(t *testing.T) {
	rules := "RewriteEngine On\nRewriteCond %{NO_SUCH_VAR} x\nRewriteRule ^ /index.php\n"
	if f := Parse("f", []byte(rules), true); len(f.Unknown) != 0 {
		t.Fatalf("proxy mode reads only the LiteSpeed block: %q", f.Unknown)
	}
	if f := Parse("f", []byte(rules), false); len(f.Unknown) != 1 {
		t.Fatalf("docroot mode: %q", f.Unknown)
	}
}

func TestCacheEnableCachesWhatNoRuleDecides(t *testing.T) {
	tr, _ := newTree(t, map[string]string{
		".htaccess": "<IfModule LiteSpeed>\nCacheEnable public /\nCacheDisable public /admin\n" +
			"RewriteEngine On\nRewriteRule ^short - [E=Cache-Control:max-age=60]\n" +
			"RewriteRule ^admin/open - [E=Cache-Control:max-age=30]\n</IfModule>\n",
		"sub/.htaccess": "CacheEnable private max-age=300\nCacheIgnoreCacheControl on\n",
	})
	for _, tt := range []struct {
		line                             string
		ttl                              int64
		private, enabled, disabled, igno bool
	}{
		{line: "GET /page", ttl: defaultCacheTTL, enabled: true},
		{line: "GET /short", ttl: 60},
		{line: "GET /admin/users", disabled: true},
		{line: "GET /administrator", ttl: defaultCacheTTL, enabled: true},
		{line: "GET /admin/open", ttl: 30},
		{line: "GET /sub/x", ttl: 300, private: true, enabled: true, igno: true},
	} {
		c := eval(t, tr, tt.line, nil).Cache
		if c.TTL != tt.ttl || c.Private != tt.private || c.Enabled != tt.enabled || c.Disabled != tt.disabled || c.IgnoreCacheControl != tt.igno || c.NoCache {
			t.Fatalf("%s: %+v, want %+v", tt.line, c, tt)
		}
	}
}

func TestCacheEnableArguments(t *testing.T) {
	for src, want := range map[string]string{
		"CacheEnable public /\n":                    "",
		"CacheEnable\n":                             "",
		"CacheEnable disk /x\n":                     "",
		"CacheDisable on\n":                         "",
		"CacheEnable public max-age=0\n":            "bad",
		"CacheEnable sometimes\n":                   "unexpected",
		"CacheDisable max-age=5\n":                  "unexpected",
		"CacheIgnoreCacheControl maybe\n":           "on or off",
		"CacheIgnoreCacheControl\n":                 "on or off",
		"CacheEnable private /a max-age=9\n":        "",
		"CacheIgnoreCacheControl On\n":              "",
		"CacheDisable public /wp-admin/ x\n":        "unexpected",
		"<Files x>\nCacheEnable public\n</Files>\n": "",
	} {
		f := Parse("f", []byte(src), false)
		got := ""
		if len(f.Errs) > 0 {
			got = f.Errs[0].Error()
		}
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Fatalf("%q: error %q, want %q", src, got, want)
		}
	}
}

func TestCheckTreeListsUnknownVariables(t *testing.T) {
	root := writeTree(t, map[string]string{".htaccess": craftRules, "sub/.htaccess": "RewriteEngine On\nRewriteCond %{ORG_REQ_URL} !/admin\nRewriteRule .* - [E=Cache-Control:max-age=120]\n"})
	p, err := CheckTree(root, "")
	if err != nil || len(p.Unknown) != 1 || !strings.HasPrefix(p.Unknown[0], root+"/sub/.htaccess:2: RewriteCond reads %{ORG_REQ_URL}") {
		t.Fatalf("err %v unknown %q", err, p.Unknown)
	}
}
