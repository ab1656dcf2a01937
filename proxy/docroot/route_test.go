package docroot

import (
	"os"
	"path/filepath"
	"testing"
)

// tree makes a docroot with files, a directory without an index, a
// symlink inside and one escaping it; it returns the root.
func tree(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "www")
	files := map[string]string{
		"index.php":           "<?php echo 'front';",
		"hello.php":           "<?php echo 'hi';",
		"style.css":           "body{}",
		".env":                "SECRET=1",
		".git/config":         "[core]",
		".htaccess":           "deny",
		".well-known/acme":    "token",
		"uploads/evil.jpg":    "<?php system('id');",
		"uploads/x.PHP":       "<?php echo 'upper';",
		"blog/index.html":     "blog",
		"empty/.keep":         "",
		"sub/index.php":       "<?php echo 'sub';",
		"app/run.php":         "<?php echo $_SERVER['PATH_INFO'];",
		"../outside.php":      "<?php echo 'outside';",
		"../outside/file.txt": "outside",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link-in.css":   "style.css",
		"escape.php":    "../outside.php",
		"escape-dir":    "../outside",
		"uploads/a.php": "../../outside.php",
	}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestResolve(t *testing.T) {
	root := tree(t)
	tests := []struct {
		name, path string
		cfg        Config
		kind       kind
		script     string // scriptName for kindPHP
		pathInfo   string
	}{
		{name: "existing script runs", path: "/hello.php", kind: kindPHP, script: "/hello.php"},
		{name: "static file served", path: "/style.css", kind: kindStatic},
		{name: "missing path goes to the front controller", path: "/2024/01/post/", kind: kindPHP, script: "/index.php"},
		{name: "missing script is 404, not the front controller", path: "/nope.php", kind: kindNotFound},
		{name: "image with php path info is not executed", path: "/uploads/evil.jpg/x.php", kind: kindNotFound},
		{name: "image itself is static, never php", path: "/uploads/evil.jpg", kind: kindStatic},
		{name: "upper-case extension is not php", path: "/uploads/x.PHP", kind: kindStatic},
		{name: "dotfile denied", path: "/.env", kind: kindForbidden},
		{name: "dot directory denied", path: "/.git/config", kind: kindForbidden},
		{name: "htaccess denied", path: "/.htaccess", kind: kindForbidden},
		{name: "well-known allowed", path: "/.well-known/acme", kind: kindStatic},
		{name: "dot-dot refused", path: "/../outside.php", kind: kindBadPath},
		{name: "nul refused", path: "/hello.php\x00.jpg", kind: kindBadPath},
		{name: "relative path refused", path: "hello.php", kind: kindBadPath},
		{name: "directory without slash redirects", path: "/blog", kind: kindRedirect},
		{name: "directory index html", path: "/blog/", kind: kindStatic},
		{name: "directory index php", path: "/sub/", kind: kindPHP, script: "/sub/index.php"},
		{name: "directory without index goes to the front controller", path: "/empty/", kind: kindPHP, script: "/index.php"},
		{name: "directory without index and no front controller is 403", path: "/empty/", cfg: Config{FrontController: ""}, kind: kindForbidden},
		{name: "symlink inside the root served", path: "/link-in.css", kind: kindStatic},
		{name: "symlinked script escaping the root refused", path: "/escape.php", kind: kindForbidden},
		{name: "symlinked directory escaping the root refused", path: "/escape-dir/file.txt", kind: kindForbidden},
		{name: "nested escaping symlink refused", path: "/uploads/a.php", kind: kindForbidden},
		{name: "escaping symlink allowed when configured", path: "/escape.php", cfg: Config{FollowSymlinks: true, FrontController: "/index.php"}, kind: kindPHP, script: "/escape.php"},
		{name: "path info off: script with trailing path is the front controller's", path: "/app/run.php/a/b", kind: kindPHP, script: "/index.php"},
		{name: "path info on splits", path: "/app/run.php/a/b", cfg: Config{PathInfo: true, FrontController: "/index.php"}, kind: kindPHP, script: "/app/run.php", pathInfo: "/a/b"},
		{name: "php-only sends static to the origin", path: "/style.css", cfg: Config{PHPOnly: true}, kind: kindFallback},
		{name: "php-only runs scripts", path: "/hello.php", cfg: Config{PHPOnly: true}, kind: kindPHP, script: "/hello.php"},
		{name: "php-only still denies dotfiles", path: "/.env", cfg: Config{PHPOnly: true}, kind: kindForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if !cfg.PHPOnly && !cfg.PathInfo && !cfg.FollowSymlinks && tt.name != "directory without index and no front controller is 403" {
				cfg.FrontController = "/index.php"
			}
			cfg.Root = root
			h, err := New(cfg, &fakePHP{}, failUpstream{})
			if err != nil {
				t.Fatal(err)
			}
			got := h.resolve(tt.path)
			if got.kind != tt.kind {
				t.Fatalf("resolve(%q) kind = %d, want %d (%+v)", tt.path, got.kind, tt.kind, got)
			}
			if got.kind == kindPHP && (got.scriptName != tt.script || got.pathInfo != tt.pathInfo) {
				t.Fatalf("resolve(%q) script %q info %q, want %q %q", tt.path, got.scriptName, got.pathInfo, tt.script, tt.pathInfo)
			}
			if got.file != "" && !within(got.file, h.realRoot) && !cfg.FollowSymlinks {
				t.Fatalf("resolve(%q) = %s outside the root", tt.path, got.file)
			}
		})
	}
}

func TestResolveWithoutPHPNeverServesScripts(t *testing.T) {
	h, err := New(Config{Root: tree(t), FrontController: "/index.php"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.resolve("/hello.php"); got.kind != kindForbidden {
		t.Fatalf("script without a pool: kind %d, want forbidden", got.kind)
	}
	if got := h.resolve("/missing"); got.kind != kindNotFound {
		t.Fatalf("front controller without a pool: kind %d, want not found", got.kind)
	}
}

func FuzzResolveStaysInRoot(f *testing.F) {
	for _, s := range []string{"/", "/hello.php", "/../x", "/a/../../b", "/.env", "/uploads/evil.jpg/x.php", "/escape-dir/file.txt", "//etc/passwd", "/%2e%2e/"} {
		f.Add(s)
	}
	root := tree(f)
	h, err := New(Config{Root: root, FrontController: "/index.php", PathInfo: true}, &fakePHP{}, failUpstream{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		got := h.resolve(path)
		if got.file != "" && !within(got.file, h.realRoot) {
			t.Fatalf("resolve(%q) = %s outside %s", path, got.file, h.realRoot)
		}
		if got.kind == kindPHP && filepath.Ext(got.file) != ".php" {
			t.Fatalf("resolve(%q) runs %s as php", path, got.file)
		}
	})
}
