package docroot

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// offTree is a docroot whose .htaccess files deny or switch off PHP in
// some directories.
func offTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"ok.php":                 "<?php",
		"uploads/.htaccess":      "<FilesMatch \"\\.php$\">\nRequire all denied\n</FilesMatch>\n",
		"uploads/index.php":      "<?php // SOURCE",
		"static/.htaccess":       "<Files index.html>\nRequire all denied\n</Files>\n",
		"static/index.html":      "SECRET",
		"off/.htaccess":          "php_flag engine off\n",
		"off/index.php":          "<?php // SOURCE",
		"off/x.php":              "<?php // SOURCE",
		"handler/.htaccess":      "<FilesMatch \\.php$>\nSetHandler none\n</FilesMatch>\n",
		"handler/x.php":          "<?php // SOURCE",
		"wordfence/.htaccess":    "<IfModule mod_php7.c>\nphp_flag engine 0\n</IfModule>\nAddHandler cgi-script .php .pl .py\nOptions -ExecCGI\n",
		"wordfence/x.php":        "<?php // SOURCE",
		"sub/index.php":          "<?php",
		"front/.htaccess":        "<Files front.php>\nRequire all denied\n</Files>\n",
		"front/front.php":        "<?php // SOURCE",
		"rewritten/.htaccess":    "RewriteEngine On\nRewriteRule ^go$ /uploads/ [L]\n",
		"rewritten/placeholder":  "",
		"uploads/sub/.htaccess":  "php_flag engine on\n",
		"uploads/sub/ignore.txt": "",
	})
	return root
}

// TestIndexAndFrontControllerGoThroughFilesRules: a directory's index
// and the front controller meet every per-file rule a direct request
// for them meets (mod_dir's internal redirect): <FilesMatch> denying
// .php denies /uploads/ too, and PHP never runs there.
func TestIndexAndFrontControllerGoThroughFilesRules(t *testing.T) {
	php := &fakePHP{out: "Content-Type: text/plain\r\n\r\nran"}
	h, err := New(Config{Root: offTree(t), Htaccess: true, FrontController: "/front/front.php"}, php, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(t.Context())
	for i, tt := range []struct {
		path   string
		status int
	}{
		{"/uploads/index.php", 403},
		{"/uploads/", 403},
		{"/rewritten/go", 403},
		{"/static/index.html", 403},
		{"/static/", 403},
		{"/front/front.php", 403},
		{"/nothing-here", 403},
		{"/sub/", 200},
		{"/ok.php", 200},
	} {
		// Unremembered, remembered, recalled: a key hashes one request.
		for _, key := range []uint64{0, uint64(i + 1), uint64(i + 1)} {
			php.params = nil
			resp := &fasthttp.Response{}
			var req fasthttp.Request
			req.SetRequestURI(tt.path)
			if err := h.DoForKey(nil, key, &req, resp); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode() != tt.status || strings.Contains(string(resp.Body()), "SOURCE") || strings.Contains(string(resp.Body()), "SECRET") {
				t.Errorf("%s (key %d): %d %q, want %d", tt.path, key, resp.StatusCode(), resp.Body(), tt.status)
			}
			if tt.status != 200 && php.params != nil {
				t.Errorf("%s (key %d): PHP ran %s", tt.path, key, php.params["SCRIPT_FILENAME"])
			}
		}
	}
}

// TestScriptsWherePHPIsOffAreRefused: php_flag engine off, SetHandler
// none for .php and Wordfence's uploads block answer 403 for a script
// there — never run, never its source — directly or as an index.
func TestScriptsWherePHPIsOffAreRefused(t *testing.T) {
	php := &fakePHP{out: "Content-Type: text/plain\r\n\r\nran"}
	h, err := New(Config{Root: offTree(t), Htaccess: true}, php, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(t.Context())
	for _, p := range []string{"/off/x.php", "/off/", "/handler/x.php", "/wordfence/x.php"} {
		php.params = nil
		resp, body, err := do(t, h, "GET", p, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 403 || strings.Contains(body, "SOURCE") || php.params != nil {
			t.Errorf("%s: %d %q, PHP ran: %v; want 403", p, resp.StatusCode(), body, php.params != nil)
		}
	}
	if resp, body, _ := do(t, h, "GET", "/ok.php", nil, ""); resp.StatusCode() != 200 || body != "ran" {
		t.Errorf("/ok.php: %d %q", resp.StatusCode(), body)
	}
}
