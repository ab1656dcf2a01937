package docroot

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLookupSeesChangesAfterItsTTL(t *testing.T) {
	root := tree(t)
	h, err := New(Config{Root: root}, &fakePHP{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.lookup("/new.php"); got.kind != kindNotFound {
		t.Fatalf("missing script: kind %d", got.kind)
	}
	if err := os.WriteFile(filepath.Join(root, "new.php"), []byte("<?php"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := h.lookup("/new.php"); got.kind != kindNotFound {
		t.Fatalf("within the TTL the remembered answer stands: kind %d", got.kind)
	}
	h.lookups.mu.Lock()
	e := h.lookups.m["/new.php"]
	e.at = e.at.Add(-2 * lookupTTL)
	h.lookups.m["/new.php"] = e
	h.lookups.mu.Unlock()
	if got := h.lookup("/new.php"); got.kind != kindPHP {
		t.Fatalf("after the TTL the new script is found: kind %d", got.kind)
	}
}

func TestLookupCacheIsBounded(t *testing.T) {
	var l lookups
	now := time.Now()
	for i := range lookupMax + 10 {
		l.put(string(rune(i)), target{}, now)
	}
	if n := len(l.m); n > lookupMax {
		t.Fatalf("%d entries, bound %d", n, lookupMax)
	}
}

func TestStaticFileChangedWithinTheLookupTTLIsServedFresh(t *testing.T) {
	root := tree(t)
	h, _ := New(Config{Root: root}, nil, nil)
	_, body, _ := do(t, h, "GET", "/style.css", nil, "")
	if err := os.WriteFile(filepath.Join(root, "style.css"), []byte("body{color:blue}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, body2, _ := do(t, h, "GET", "/style.css", nil, "")
	if body == body2 || body2 != "body{color:blue}" {
		t.Fatalf("served %q after the file changed to %q", body2, "body{color:blue}")
	}
}
