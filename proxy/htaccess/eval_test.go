package htaccess

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func wordpressTree(t *testing.T, extra map[string]string) (*Tree, *clock) {
	t.Helper()
	src, err := os.ReadFile("testdata/wordpress.htaccess")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".htaccess": string(src), "index.php": "<?php", "wp-content/style.css": "body{}",
		"wp-content/font.woff2": "x", "wp-admin/": "", "wp-admin/admin-ajax.php": "<?php",
	}
	for k, v := range extra {
		files[k] = v
	}
	return newTree(t, files)
}

func TestWordPressPermalinkRewritesToIndexWithAuthorization(t *testing.T) {
	tr, _ := wordpressTree(t, nil)
	o := eval(t, tr, "GET /hello-world/?p=1", hdr{"Authorization": "Bearer xyz"})
	if o.Status != 0 || string(o.Path) != "/index.php" || string(o.Query) != "p=1" || !o.Rewritten {
		t.Fatalf("got status %d path %q query %q rewritten %v (%s)", o.Status, o.Path, o.Query, o.Rewritten, o.Cause)
	}
	env := map[string]string{}
	o.Env(func(n string, v []byte) { env[n] = string(v) })
	if env["HTTP_AUTHORIZATION"] != "Bearer xyz" || env["REDIRECT_HTTP_AUTHORIZATION"] != "Bearer xyz" {
		t.Fatalf("env %v: want HTTP_AUTHORIZATION and its REDIRECT_ copy", env)
	}
	if o.Rounds() != 2 {
		t.Fatalf("rounds %d, want 2 (the rewrite, then index.php stopping at [L])", o.Rounds())
	}
}

func TestWordPressExistingFilesAndDirectoriesAreNotRewritten(t *testing.T) {
	tr, _ := wordpressTree(t, nil)
	for _, p := range []string{"/", "/index.php", "/wp-content/style.css", "/wp-admin/", "/wp-admin"} {
		o := eval(t, tr, "GET "+p, nil)
		if o.Status != 0 || o.Rewritten || string(o.Path) != p {
			t.Errorf("%s: status %d rewritten %v path %q", p, o.Status, o.Rewritten, o.Path)
		}
	}
}

func TestLiteSpeedRulesDriveTheCache(t *testing.T) {
	tr, _ := wordpressTree(t, nil)
	tests := []struct {
		name    string
		h       hdr
		vary    string
		noCache bool
	}{
		{"desktop", hdr{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"}, "", false},
		{"mobile", hdr{"User-Agent": "Mozilla/5.0 (Linux; Android 14) Mobile Safari"}, "ismobile", false},
		{"opera mini, the escaped space", hdr{"User-Agent": "Opera Mini/8"}, "ismobile", false},
		{"mobile and webp", hdr{"User-Agent": "x Mobile", "Accept": "image/webp,*/*"}, "ismobile+webp", false},
		{"do-not-cache cookie", hdr{"Cookie": "a=1; nocache_please=1"}, "", true},
		{"do-not-cache agent", hdr{"User-Agent": "nocachebot/1.0"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := eval(t, tr, "GET /hello-world/", tt.h)
			if string(o.Cache.Vary) != tt.vary || o.Cache.NoCache != tt.noCache {
				t.Fatalf("vary %q nocache %v, want %q %v", o.Cache.Vary, o.Cache.NoCache, tt.vary, tt.noCache)
			}
			if string(o.Cache.VaryCookies) != "wp-postpass_abc,wp_lang" {
				t.Fatalf("vary cookies %q", o.Cache.VaryCookies)
			}
			if strings.Join(o.Cache.DropQuery, " ") != "fbclid gclid utm* _ga" {
				t.Fatalf("drop query %v", o.Cache.DropQuery)
			}
		})
	}
}

func TestLiteSpeedDenyRulesForbidPluginFiles(t *testing.T) {
	tr, _ := wordpressTree(t, map[string]string{"wp-content/litespeed/debug/debug.log": "secret"})
	for _, p := range []string{"/wp-content/litespeed/debug/debug.log", "/wp-content/.litespeed_conf.dat"} {
		if o := eval(t, tr, "GET "+p, nil); o.Status != 403 {
			t.Errorf("%s: status %d, want 403", p, o.Status)
		}
	}
}

func TestProxyModeReadsOnlyTheLiteSpeedBlock(t *testing.T) {
	src, _ := os.ReadFile("testdata/wordpress.htaccess")
	c := newClock()
	root := writeTree(t, map[string]string{".htaccess": string(src) + "\nDeny from all\n"})
	cfg := c.cfg(root)
	cfg.ProxyOnly = true
	tr, err := NewTree(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := eval(t, tr, "GET /hello-world/", hdr{"User-Agent": "Android Mobile"})
	if o.Status != 0 || o.Rewritten || string(o.Cache.Vary) != "ismobile" {
		t.Fatalf("status %d rewritten %v vary %q: want only the cache rules applied", o.Status, o.Rewritten, o.Cache.Vary)
	}
	if o := eval(t, tr, "GET /wp-content/litespeed/debug/x.log", nil); o.Status != 403 {
		t.Fatalf("plugin debug log: status %d, want 403 (the block's [F] rule)", o.Status)
	}
}

func TestRewriteFlags(t *testing.T) {
	tr, _ := newTree(t, map[string]string{
		".htaccess": `RewriteEngine On
RewriteRule ^old/(.*)$ /new/$1 [R=301,L]
RewriteRule ^qsa$ /target?added=1 [R,QSA]
RewriteRule ^qsd$ /target [R=302,QSD]
RewriteRule ^gone$ - [G]
RewriteRule ^forbidden$ - [F]
RewriteRule ^NoCase$ /nc.html [NC,L]
RewriteRule ^skip$ - [S=1]
RewriteRule ^skip$ /skipped.html [L]
RewriteRule ^skip$ /after-skip.html [L]
RewriteRule ^chain$ - [C]
RewriteRule ^nomatch$ /chained.html [L]
RewriteRule ^chain$ /chain-end.html [L]
RewriteRule ^env$ - [E=FOO:bar,E=BAZ:$0]
RewriteRule ^type$ /f.txt [T=application/x-custom,L]
RewriteRule \.thing$ - [T=application/x-thing]
RewriteRule ^prox/(.*)$ http://origin.test/x/$1 [P]
RewriteRule ^proxrel$ /local/path [P]
RewriteRule ^ne$ /a\%20b [R,NE]
RewriteRule ^esc/(.*)$ /x/$1 [R]
RewriteRule ^b/(.*)$ /q.php?v=$1 [B,L]
RewriteRule ^cookie$ - [CO=seen:yes:example.com:10:/:secure:httponly]
RewriteRule ^abs$ https://other.example/path [L]
RewriteRule ^end$ /end2 [END]
RewriteRule ^end2$ /never [L]
RewriteRule ^status$ - [R=404]
`,
		"nc.html": "", "f.txt": "",
	})
	tests := []struct {
		line, status, loc, path string
	}{
		{"GET /old/a/b?x=1", "301", "http://example.com/new/a/b?x=1", ""},
		{"GET /qsa?orig=2", "302", "http://example.com/target?added=1&orig=2", ""},
		{"GET /qsd?orig=2", "302", "http://example.com/target", ""},
		{"GET /gone", "410", "", ""},
		{"GET /forbidden", "403", "", ""},
		{"GET /NOCASE", "", "", "/nc.html"},
		{"GET /skip", "", "", "/after-skip.html"},
		{"GET /chain", "", "", "/chain-end.html"},
		{"GET /type", "", "", "/f.txt"},
		{"GET /ne", "302", "http://example.com/a%20b", ""},
		{"GET /esc/a b", "302", "http://example.com/x/a%20b", ""},
		{"GET /abs?k=v", "302", "https://other.example/path?k=v", ""},
		{"GET /end", "", "", "/end2"},
		{"GET /status", "404", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			o := eval(t, tr, tt.line, nil)
			st := ""
			if o.Status != 0 {
				st = itoa(o.Status)
			}
			if st != tt.status || string(o.Location) != tt.loc || tt.path != "" && string(o.Path) != tt.path {
				t.Fatalf("status %q loc %q path %q, want %q %q %q (%s)", st, o.Location, o.Path, tt.status, tt.loc, tt.path, o.Cause)
			}
		})
	}
	o := eval(t, tr, "GET /type", nil)
	if o.Mime != "" {
		t.Errorf("T= then an internal redirect: mime %q, want none (Apache types the new request afresh)", o.Mime)
	}
	if o = eval(t, tr, "GET /x.thing", nil); o.Mime != "application/x-thing" {
		t.Errorf("T=: mime %q", o.Mime)
	}
	if o = eval(t, tr, "GET /prox/a?q=1", nil); string(o.Proxy) != "http://origin.test/x/a?q=1" || o.Status != 0 || o.Rewritten {
		t.Errorf("P: %q status %d rewritten %v", o.Proxy, o.Status, o.Rewritten)
	}
	if o = eval(t, tr, "GET /proxrel", nil); string(o.Proxy) != "http://example.com/local/path" {
		t.Errorf("P to a path: %q", o.Proxy)
	}
	o = eval(t, tr, "GET /env", nil)
	env := map[string]string{}
	o.Env(func(n string, v []byte) { env[n] = string(v) })
	if env["FOO"] != "bar" || env["BAZ"] != "env" {
		t.Errorf("E=: env %v", env)
	}
	o = eval(t, tr, "GET /b/a&b c", nil)
	if string(o.Path) != "/q.php" || string(o.Query) != "v=a%26b+c" {
		t.Errorf("B: path %q query %q", o.Path, o.Query)
	}
	o = eval(t, tr, "GET /cookie", nil)
	if len(o.Cookies()) != 1 || !strings.HasPrefix(string(o.Cookies()[0]), "seen=yes; domain=example.com; expires=") ||
		!strings.HasSuffix(string(o.Cookies()[0]), "; path=/; secure; HttpOnly") {
		t.Errorf("CO=: %q", o.Cookies())
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestRewriteConditions(t *testing.T) {
	tr, _ := newTree(t, map[string]string{
		".htaccess": `RewriteEngine On
RewriteCond %{HTTP_HOST} ^www\.(.+)$ [NC]
RewriteRule ^(.*)$ http://%1/$1 [R=301,L]
RewriteCond %{QUERY_STRING} id=(\d+)
RewriteRule ^item$ /item-%1.html? [R,L]
RewriteCond %{REQUEST_METHOD} =POST
RewriteRule ^form$ - [F]
RewriteCond %{HTTP:X-Level} -ge5
RewriteRule ^level$ - [F]
RewriteCond %{HTTP:X-Name} >m
RewriteRule ^name$ - [G]
RewriteCond %{REQUEST_FILENAME} -s
RewriteRule ^full\.txt$ - [F]
RewriteCond %{REQUEST_FILENAME} -l
RewriteRule ^link$ - [F]
RewriteCond %{HTTP_USER_AGENT} bad [OR]
RewriteCond %{HTTP_REFERER} spam
RewriteRule ^or$ - [F]
RewriteCond %{HTTP_COOKIE} !session=
RewriteRule ^members$ /login [R,L]
RewriteCond %{HTTPS} off
RewriteCond %{SERVER_PORT} -eq80
RewriteCond %{THE_REQUEST} ^GET\ /secure
RewriteRule ^secure$ https://%{HTTP_HOST}/secure [R=301,L]
RewriteCond %{DOCUMENT_ROOT}/cached/$1.html -f
RewriteRule ^page/(.*)$ /cached/$1.html [L]
`,
		"full.txt": "x", "cached/about.html": "x",
	})
	if err := os.Symlink(filepath.Join(tr.Root(), "full.txt"), filepath.Join(tr.Root(), "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, line string
		h          hdr
		status     int
		loc, path  string
	}{
		{"host capture %1", "GET /a/b", hdr{"Host": "WWW.example.org"}, 301, "http://example.org/a/b", ""},
		{"query capture, ? drops query", "GET /item?id=42", nil, 302, "http://example.com/item-42.html", ""},
		{"= method", "POST /form", nil, 403, "", ""},
		{"= method, no match", "GET /form", nil, 0, "", "/form"},
		{"-ge", "GET /level", hdr{"X-Level": "7"}, 403, "", ""},
		{"-ge below", "GET /level", hdr{"X-Level": "4"}, 0, "", "/level"},
		{"> string", "GET /name", hdr{"X-Name": "zed"}, 410, "", ""},
		{"-s", "GET /full.txt", nil, 403, "", ""},
		{"-l", "GET /link", nil, 403, "", ""},
		{"OR first", "GET /or", hdr{"User-Agent": "badbot"}, 403, "", ""},
		{"OR second", "GET /or", hdr{"Referer": "http://spam"}, 403, "", ""},
		{"OR neither", "GET /or", nil, 0, "", "/or"},
		{"negated regex", "GET /members", nil, 302, "http://example.com/login", ""},
		{"negated regex, has cookie", "GET /members", hdr{"Cookie": "session=1"}, 0, "", "/members"},
		{"HTTPS off + port + THE_REQUEST", "GET /secure", nil, 301, "https://example.com/secure", ""},
		{"file test with $1", "GET /page/about", nil, 0, "", "/cached/about.html"},
		{"file test fails", "GET /page/none", nil, 0, "", "/page/none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := eval(t, tr, tt.line, tt.h)
			if o.Status != tt.status || string(o.Location) != tt.loc || tt.path != "" && string(o.Path) != tt.path {
				t.Fatalf("status %d loc %q path %q, want %d %q %q (%s)", o.Status, o.Location, o.Path, tt.status, tt.loc, tt.path, o.Cause)
			}
		})
	}
}

func TestRewriteLoopAnswers500(t *testing.T) {
	tr, _ := newTree(t, map[string]string{".htaccess": "RewriteEngine On\nRewriteRule ^(a+)$ /$1a [L]\n"})
	o := eval(t, tr, "GET /a", nil)
	if o.Status != 500 || !strings.Contains(o.Cause, "internal redirects") {
		t.Fatalf("status %d cause %q, want 500 after 10 internal redirects", o.Status, o.Cause)
	}
}

func TestSubdirectoryRulesReplaceParentsUnlessInherit(t *testing.T) {
	tr, _ := newTree(t, map[string]string{
		".htaccess":         "RewriteEngine On\nRewriteRule ^(.*)x$ /root-rule.html [L]\n",
		"own/.htaccess":     "RewriteEngine On\nRewriteRule ^y$ own-rule.html [L]\n",
		"inherit/.htaccess": "RewriteEngine On\nRewriteOptions Inherit\nRewriteRule ^y$ own-rule.html [L]\n",
		"plain/.htaccess":   "Options -Indexes\n",
		"base/.htaccess":    "RewriteEngine On\nRewriteBase /elsewhere/\nRewriteRule ^y$ z.html [L]\n",
		"off/.htaccess":     "RewriteEngine Off\n",
	})
	tests := []struct{ line, path string }{
		{"GET /ax", "/root-rule.html"},
		{"GET /own/ax", "/own/ax"},           // the parent's rules are gone
		{"GET /own/y", "/own/own-rule.html"}, // relative: the directory's own path
		{"GET /inherit/ax", "/root-rule.html"},
		{"GET /inherit/y", "/inherit/own-rule.html"},
		{"GET /plain/ax", "/root-rule.html"}, // no rewrite directive: the parent's apply
		{"GET /base/y", "/elsewhere/z.html"},
		{"GET /off/ax", "/off/ax"},
	}
	for _, tt := range tests {
		o := eval(t, tr, tt.line, nil)
		if o.Status != 0 || string(o.Path) != tt.path {
			t.Errorf("%s: status %d path %q, want %q (%s)", tt.line, o.Status, o.Path, tt.path, o.Cause)
		}
	}
}

func TestParseErrorAnswers500OnlyBelowItsDirectory(t *testing.T) {
	tr, _ := newTree(t, map[string]string{
		"broken/.htaccess": "RewriteEngine On\nRewriteRule ^(unclosed$ - [F]\n",
		"broken/a.html":    "", "fine/a.html": "",
	})
	o := eval(t, tr, "GET /broken/a.html", nil)
	if o.Status != 500 || !strings.Contains(o.Cause, filepath.Join(tr.Root(), "broken/.htaccess")+":2:") {
		t.Fatalf("status %d cause %q, want 500 with FILE:LINE", o.Status, o.Cause)
	}
	if o := eval(t, tr, "GET /fine/a.html", nil); o.Status != 0 {
		t.Fatalf("sibling directory: status %d", o.Status)
	}
}

func TestChangeIsInForceWithinTheStatInterval(t *testing.T) {
	tr, c := newTree(t, map[string]string{"a.html": ""})
	if o := eval(t, tr, "GET /a.html", nil); o.Status != 0 {
		t.Fatalf("before: %d", o.Status)
	}
	name := filepath.Join(tr.Root(), ".htaccess")
	if err := os.WriteFile(name, []byte("Require all denied\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o := eval(t, tr, "GET /a.html", nil); o.Status != 0 {
		t.Fatalf("within the interval the old state holds (no stat): %d", o.Status)
	}
	c.add(1100 * time.Millisecond)
	if o := eval(t, tr, "GET /a.html", nil); o.Status != 403 {
		t.Fatalf("after the interval: %d, want 403", o.Status)
	}
	// Same size and second, new inode: still seen (the version includes it).
	tmp := name + ".new"
	os.WriteFile(tmp, []byte("Require all granted\n"), 0o644)
	os.Rename(tmp, name)
	c.add(1100 * time.Millisecond)
	if o := eval(t, tr, "GET /a.html", nil); o.Status != 0 {
		t.Fatalf("after replacing the file: %d", o.Status)
	}
}

func TestParsedFileIsReusedWhileUnchanged(t *testing.T) {
	tr, c := newTree(t, map[string]string{".htaccess": "RewriteEngine On\n"})
	eval(t, tr, "GET /", nil)
	first := tr.dirs["/"].file
	c.add(2 * time.Second)
	eval(t, tr, "GET /", nil)
	if tr.dirs["/"].file != first {
		t.Fatal("an unchanged file was parsed again")
	}
}

func TestRedirectDirectives(t *testing.T) {
	tr, _ := newTree(t, map[string]string{
		".htaccess": `Redirect 301 /old http://example.com/new
Redirect gone /removed
RedirectMatch 302 ^/blog/(\d+)$ /posts/$1
RedirectPermanent /perm/ /p/
`,
	})
	tests := []struct {
		line   string
		status int
		loc    string
	}{
		{"GET /old/page?q=1", 301, "http://example.com/new/page?q=1"},
		{"GET /old", 301, "http://example.com/new"},
		{"GET /older", 0, ""},
		{"GET /removed", 410, ""},
		{"GET /blog/42", 302, "http://example.com/posts/42"},
		{"GET /perm/x", 301, "http://example.com/p/x"},
	}
	for _, tt := range tests {
		o := eval(t, tr, tt.line, nil)
		if o.Status != tt.status || string(o.Location) != tt.loc {
			t.Errorf("%s: %d %q, want %d %q", tt.line, o.Status, o.Location, tt.status, tt.loc)
		}
	}
}

func TestOneRoundStopsAtTheInternalRedirect(t *testing.T) {
	tr, _ := wordpressTree(t, nil)
	r := request("GET /hello-world/", hdr{"User-Agent": "Android Mobile"})
	r.OneRound = true
	o := &Outcome{}
	tr.Eval(r, o)
	if o.Rounds() != 1 || string(o.Path) != "/index.php" || string(o.Cache.Vary) != "ismobile" {
		t.Fatalf("rounds %d path %q vary %q", o.Rounds(), o.Path, o.Cache.Vary)
	}
}

func TestHeaderEnvHTTPSOverTLS(t *testing.T) {
	tr, _ := newTree(t, map[string]string{".htaccess": "Header set Strict-Transport-Security \"max-age=600\" env=HTTPS\n", "a.html": ""})
	for _, tls := range []bool{false, true} {
		r := request("GET /a.html", nil)
		r.HTTPS = tls
		o := &Outcome{}
		tr.Eval(r, o)
		h := respHeader{}
		o.Apply(Answer{Status: 200}, h, time.Now())
		if got := h.Peek("Strict-Transport-Security") != nil; got != tls {
			t.Errorf("TLS %v: header set %v", tls, got)
		}
	}
}
