package htaccess

import (
	"os"
	"syscall"
	"testing"
)

// TestTreeReadsThroughItsOpener: the files are opened through
// Config.Open (the docroot's, beneath its directory); one it refuses —
// a directory swapped for a symlink to outside, EXDEV — answers 403
// under that directory, and what it opens is what is parsed.
func TestTreeReadsThroughItsOpener(t *testing.T) {
	root := writeTree(t, map[string]string{
		".htaccess":      "Header set X-Root yes\n",
		"sub/.htaccess":  "Header set X-Sub yes\n",
		"sub/f.txt":      "x",
		"away/.htaccess": "Header set X-Away yes\n",
		"away/f.txt":     "x",
	})
	c := newClock()
	cfg := c.cfg(root)
	var opened []string
	cfg.Open = func(rel string) (*os.File, error) {
		opened = append(opened, rel)
		if rel == "away/.htaccess" {
			return nil, &os.PathError{Op: "openat2", Path: rel, Err: syscall.EXDEV}
		}
		return os.Open(root + "/" + rel)
	}
	tr, err := NewTree(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o := eval(t, tr, "GET /sub/f.txt", nil); o.Status != 0 {
		t.Fatalf("/sub/f.txt: status %d (%s)", o.Status, o.Cause)
	}
	if o := eval(t, tr, "GET /away/f.txt", nil); o.Status != 403 {
		t.Fatalf("/away/f.txt under a refused .htaccess: status %d, want 403", o.Status)
	}
	want := map[string]bool{".htaccess": true, "sub/.htaccess": true, "away/.htaccess": true}
	for _, rel := range opened {
		delete(want, rel)
	}
	if len(want) != 0 {
		t.Fatalf("opened %q; never through the opener: %v", opened, want)
	}
}
