package htaccess

import (
	"strings"
	"testing"
	"time"
)

func TestParseWarnsOncePerUnsupportedDirective(t *testing.T) {
	f := Parse("/site/.htaccess", []byte("AddHandler x .y\nAddHandler z .w\nLanguagePriority en\nphp_value upload_max_filesize 64M\n"), false)
	if len(f.Errs) != 0 {
		t.Fatalf("errors: %v", f.Errs)
	}
	want := []string{
		"/site/.htaccess:1: AddHandler is not supported: ignored",
		"/site/.htaccess:3: LanguagePriority is not supported: ignored",
		"/site/.htaccess:4: php_value/php_flag: php-cgi takes no per-request settings; put them in .user.ini: ignored",
	}
	if strings.Join(f.Warnings, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(f.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseErrorsCarryTheirLine(t *testing.T) {
	tests := []struct{ src, want string }{
		{"RewriteEngine On\nRewriteRule ^a$ /b [X]\n", "f:2: RewriteRule: unknown flag \"X\""},
		{"<IfModule mod_rewrite.c>\nRewriteEngine On\n", "f:1: <ifmodule> was not closed"},
		{"</Files>\n", "f:1: </files> without matching <files> section"},
		{"RewriteCond %{HTTP_HOST} (\nRewriteRule . - [F]\n", "f:1: RewriteCond: cannot compile regular expression"},
		{"Order sideways\n", "f:1: Order: unknown order"},
		{"Allow all\n", "f:1: allow and deny must be followed by 'from'"},
		{"Require not ip 1.2.3.4\n", "f:1: negative Require directive has no effect"},
		{"ErrorDocument 200 /x\n", "f:1: ErrorDocument: unsupported HTTP response code 200"},
		{"<Directory /x>\n</Directory>\n", "f:1: <Directory not allowed here"},
		{"RewriteBase relative/\n", "f:1: RewriteBase: argument is not a valid URL"},
		{"ExpiresByType text/css \"access plus 3 fortnights\"\n", "f:1: ExpiresByType: bad expiry unit"},
		{"RewriteRule ^(a)\\1$ - [F]\n", "f:1: RewriteRule: back-reference \\1 in a pattern is not supported"},
	}
	for _, tt := range tests {
		f := Parse("f", []byte(tt.src), false)
		if f.Err() == nil || !strings.HasPrefix(f.Err().Error(), tt.want) {
			t.Errorf("%q: error %v, want prefix %q", tt.src, f.Err(), tt.want)
		}
	}
}

func TestParseConditionalSections(t *testing.T) {
	src := `<IfModule mod_rewrite.c>
RewriteEngine On
</IfModule>
<IfModule !mod_rewrite.c>
Deny from all
</IfModule>
<IfModule mod_perl.c>
PerlSetVar x 1
Bogus directive
</IfModule>
<IfDefine SOMETHING>
Deny from all
</IfDefine>
<IfDefine !SOMETHING>
Header set X-Defined no
</IfDefine>
<IfVersion >= 2.4>
Header set X-Version 2.4
</IfVersion>
<IfVersion < 2.4>
Deny from all
</IfVersion>
RewriteRule ^a$ \
  /b [L]
`
	f := Parse("f", []byte(src), false)
	if f.Err() != nil || len(f.Warnings) != 0 {
		t.Fatalf("errors %v warnings %v", f.Errs, f.Warnings)
	}
	if f.top.access != nil || f.top.rewrite == nil || !f.top.rewrite.engine || len(f.top.headers) != 2 {
		t.Fatalf("sections applied wrongly: access %v rewrite %+v headers %d", f.top.access, f.top.rewrite, len(f.top.headers))
	}
	if r := f.top.rewrite.rules; len(r) != 1 || !r[0].flags.last {
		t.Fatalf("continued line: %+v", r)
	}
}

func TestApplyResponseDirectives(t *testing.T) {
	tr, _ := wordpressTree(t, map[string]string{
		"static/.htaccess": `AddType application/x-thing .thing
AddDefaultCharset UTF-8
FileETag None
ExpiresActive On
ExpiresDefault "access plus 1 hour"
ExpiresByType image/* "access plus 2 days"
Header set X-Frame-Options SAMEORIGIN
Header always set X-Always yes
Header append Vary Accept-Encoding
Header unset X-Powered-By
Header set X-Env %{MYENV}e env=MYENV
SetEnv MYENV hello
ErrorDocument 404 /missing.html
ErrorDocument 403 "Go away"
ErrorDocument 410 http://example.com/gone
DirectoryIndex home.html index.html
`,
		"static/a.png": "png",
	})
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	o := eval(t, tr, "GET /static/a.png", nil)
	h := respHeader{"Content-Type": {"image/png"}, "Etag": {`"x"`}, "Vary": {"Cookie"}, "X-Powered-By": {"PHP"}}
	o.Apply(Answer{Status: 200, File: "/r/static/a.png"}, h, now)
	if got := h.Peek("Cache-Control"); string(got) != "max-age=172800" {
		t.Errorf("Cache-Control %q", got)
	}
	if got := h.Peek("Expires"); string(got) != "Thu, 03 Dec 2026 12:00:00 GMT" {
		t.Errorf("Expires %q", got)
	}
	if h.Peek("Etag") != nil || h.Peek("X-Powered-By") != nil {
		t.Errorf("FileETag None / Header unset left %v", h)
	}
	if string(h.Peek("Vary")) != "Cookie, Accept-Encoding" || string(h.Peek("X-Frame-Options")) != "SAMEORIGIN" || string(h.Peek("X-Env")) != "hello" {
		t.Errorf("headers %v", h)
	}
	h = respHeader{"Content-Type": {"text/html"}}
	o.Apply(Answer{Status: 404, Generated: true}, h, now)
	if h.Peek("X-Frame-Options") != nil || string(h.Peek("X-Always")) != "yes" || string(h.Peek("Content-Type")) != "text/html; charset=utf-8" {
		t.Errorf("generated error headers %v", h)
	}
	if o.MimeType("/r/static/x.thing") != "application/x-thing" || o.MimeType("/r/static/x.txt") != "" {
		t.Errorf("AddType")
	}
	for status, want := range map[int]string{404: "1 /missing.html", 403: "3 Go away", 410: "2 http://example.com/gone", 500: "0 "} {
		k, v := o.ErrorDocument(status)
		if got := fmtInt(k) + " " + v; got != want && !(k == 0 && want == "0 ") {
			t.Errorf("ErrorDocument %d: %q, want %q", status, got, want)
		}
	}
	if list, ok := o.DirectoryIndex(); !ok || strings.Join(list, ",") != "home.html,index.html" {
		t.Errorf("DirectoryIndex %v %v", list, ok)
	}
	// The LiteSpeed Cache plugin's browser-cache block on a font.
	o = eval(t, tr, "GET /wp-content/font.woff2", nil)
	h = respHeader{"Content-Type": {"font/woff2"}}
	o.Apply(Answer{Status: 200, File: "/r/wp-content/font.woff2"}, h, now)
	if string(h.Peek("Access-Control-Allow-Origin")) != "*" || string(h.Peek("Cache-Control")) != "max-age=31557600" {
		t.Errorf("plugin browser cache: %v", h)
	}
}

func TestCleanPathNeverClimbsAboveTheRoot(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b/../c": "/a/c", "/../../etc/passwd": "/etc/passwd", "/a/./b/": "/a/b/", "//a//b": "/a/b",
		"/a/..": "/", "x/y": "/x/y", "/": "/",
	} {
		if got := string(cleanPath([]byte(in))); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseReadsAByteOrderMarkAndCRLF(t *testing.T) {
	f := Parse("f", []byte("\ufeffRewriteEngine On\r\nRewriteRule ^a$ \\\r\n  /b [L]\r\nOptions -MultiViews\r\n"), false)
	if f.Err() != nil || len(f.Warnings) != 0 || f.top.rewrite == nil || !f.top.rewrite.engine || len(f.top.rewrite.rules) != 1 {
		t.Fatalf("errors %v warnings %v rewrite %+v", f.Errs, f.Warnings, f.top.rewrite)
	}
}
