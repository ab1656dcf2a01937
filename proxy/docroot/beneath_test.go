package docroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/valyala/fasthttp"
)

// beneathTree is a root with links of every kind and, beside it,
// outside/ holding what an escape would reach.
func beneathTree(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "www"), filepath.Join(base, "outside")
	writeFiles(t, base, map[string]string{
		"www/a/file.txt":      "inside",
		"www/race/secret.txt": "inside",
		"www/race/run.php":    "<?php",
		"outside/secret.txt":  "OUTSIDE",
		"outside/run.php":     "<?php",
		"outside/file.txt":    "OUTSIDE",
	})
	for name, to := range map[string]string{
		"in.txt":    "a/file.txt",
		"in-dir":    "a",
		"out.txt":   "../outside/file.txt",
		"out-dir":   "../outside",
		"abs-in":    filepath.Join(root, "a/file.txt"),
		"abs-out":   filepath.Join(outside, "file.txt"),
		"a/up.txt":  "../a/file.txt",
		"a/far.txt": "../../outside/file.txt",
	} {
		if err := os.Symlink(to, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// writeFiles writes files (name: contents) under base.
func writeFiles(t *testing.T, base string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// swapDir replaces root/race by a symlink to outside.
func swapDir(t *testing.T, root, outside string) {
	t.Helper()
	if err := os.Rename(filepath.Join(root, "race"), filepath.Join(root, "race.real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "race")); err != nil {
		t.Fatal(err)
	}
}

// TestOpenBeneathFollowsOnlyLinksThatStayInside, with openat2 and with
// the component walk that stands in for it on older kernels: a symlink
// that stays beneath the root is followed (an absolute one too, though
// RESOLVE_BENEATH refuses those: resolved); one that leads out and a
// directory swapped for a link to outside are not.
func TestOpenBeneathFollowsOnlyLinksThatStayInside(t *testing.T) {
	for _, walk := range []bool{false, true} {
		name := "openat2"
		if walk {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) {
			if !walk && !openat2Works() {
				testbed.Skip(t, "this kernel has no openat2")
			}
			root, outside := beneathTree(t)
			r, err := openRootDir(root, walk)
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			swapDir(t, root, outside)
			for _, tt := range []struct {
				rel, real string // real "": refused
			}{
				{"a/file.txt", "a/file.txt"},
				{"in.txt", "a/file.txt"},
				{"in-dir/file.txt", "a/file.txt"},
				{"a/up.txt", "a/file.txt"},
				{".", ""},
				{"out.txt", ""},
				{"out-dir/file.txt", ""},
				{"a/far.txt", ""},
				{"abs-in", "a/file.txt"},
				{"abs-out", ""},
				{"race/secret.txt", ""},
				{"race", ""},
			} {
				real, _, err := r.stat(tt.rel)
				want := filepath.Join(root, tt.real)
				if tt.rel == "." {
					want = root
				}
				switch {
				case tt.real == "" && tt.rel != "." && err == nil:
					t.Errorf("stat(%q) = %q, want refused", tt.rel, real)
				case (tt.real != "" || tt.rel == ".") && (err != nil || real != want):
					t.Errorf("stat(%q) = %q, %v; want %q", tt.rel, real, err, want)
				}
				f, err := r.open(tt.rel)
				if err == nil {
					b := make([]byte, 16)
					n, _ := f.Read(b)
					f.Close()
					if strings.Contains(string(b[:n]), "OUTSIDE") {
						t.Errorf("open(%q) read %q from outside the root", tt.rel, b[:n])
					}
					if tt.real == "" && tt.rel != "." {
						t.Errorf("open(%q) succeeded, want refused", tt.rel)
					}
				}
			}
		})
	}
}

// TestLookedUpThenSwappedServesNothingOutside: a file and a script
// looked up (and so remembered for a second) before their directory is
// swapped for a symlink to outside answer 404, not the outside ones.
func TestLookedUpThenSwappedServesNothingOutside(t *testing.T) {
	root, outside := beneathTree(t)
	php := &fakePHP{out: "Content-Type: text/plain\r\n\r\nran"}
	h, err := New(Config{Root: root}, php, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(t.Context())
	for _, p := range []string{"/race/secret.txt", "/race/run.php"} {
		if k := h.lookup(p).kind; k != kindStatic && k != kindPHP {
			t.Fatalf("lookup(%q) before the swap = %d", p, k)
		}
	}
	swapDir(t, root, outside)
	for _, p := range []string{"/race/secret.txt", "/race/run.php"} {
		var req fasthttp.Request
		req.SetRequestURI(p)
		var resp fasthttp.Response
		php.params = nil
		if err := h.Do(&req, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != fasthttp.StatusNotFound || strings.Contains(string(resp.Body()), "OUTSIDE") {
			t.Errorf("%s after the swap: %d %q, want 404", p, resp.StatusCode(), resp.Body())
		}
		if php.params != nil {
			t.Errorf("%s after the swap: PHP was asked to run %s", p, php.params["SCRIPT_FILENAME"])
		}
	}
}

// TestClosedHandlerOpensNothing: Close releases the docroot's directory;
// a request that still arrives finds no file.
func TestClosedHandlerOpensNothing(t *testing.T) {
	root, _ := beneathTree(t)
	h, err := New(Config{Root: root}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(t.Context()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	var req fasthttp.Request
	req.SetRequestURI("/a/file.txt")
	var resp fasthttp.Response
	if err := h.Do(&req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() == fasthttp.StatusOK {
		t.Fatalf("a closed handler served %q", resp.Body())
	}
}
