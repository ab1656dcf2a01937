package testbed

import (
	"os"
	"path/filepath"
	"testing"
)

// PublicDir returns a new temporary directory that every user can enter
// and read, removed at cleanup: as root, ramjet runs PHP as an
// unprivileged user, and t.TempDir's parent is private to its owner.
func PublicDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatalf("testbed: public dir: %v", err)
		}
	}
	return dir
}
