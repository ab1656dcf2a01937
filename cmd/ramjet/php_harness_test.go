package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// phpDocroot copies testdata/php into a directory every user can read:
// ramjet runs its php-cgi workers as www-data when the tests run as root.
func phpDocroot(t testing.TB) string {
	t.Helper()
	base := testbed.PublicDir(t)
	dir := filepath.Join(base, "www")
	if err := os.CopyFS(dir, os.DirFS("testdata/php")); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Outside the docroot: what traversal and symlink attacks aim at.
	if err := os.WriteFile(filepath.Join(base, "secret.php"), []byte("<?php echo 'OUTSIDE';"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.php", filepath.Join(dir, "link.php")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// phpConfig is a config file for a docroot site; extra is YAML under
// defaults.docroot.php.
func phpConfig(t testing.TB, root, extra string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  docroot:\n    root: %q\n    path_info: true\n    php:\n", root)
	if extra == "" {
		extra = "workers: 2"
	}
	for _, line := range strings.Split(strings.TrimSpace(extra), "\n") {
		b.WriteString("      " + strings.TrimSpace(line) + "\n")
	}
	return testbed.WriteConfig(t, "", b.String())
}

// startPHP runs ramjet in docroot mode with extra pool settings.
func startPHP(t testing.TB, extra string) (*testbed.Ramjet, string) {
	t.Helper()
	root := phpDocroot(t)
	return startRamjet(t, "", "--config", phpConfig(t, root, extra)), root
}

// phpWorker is one worker as /php/status reports it.
type phpWorker struct {
	PID        int     `json:"pid"`
	State      string  `json:"state"`
	Requests   int     `json:"requests"`
	AgeSeconds float64 `json:"age_seconds"`
}

// phpWorkers reads the workers of the default pool from the admin listener.
func phpWorkers(t testing.TB, rj *testbed.Ramjet) []phpWorker {
	t.Helper()
	resp, err := http.Get(rj.AdminURL + "/php/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Pools []struct {
			Name    string      `json:"name"`
			Workers []phpWorker `json:"workers"`
		} `json:"pools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Pools) != 1 {
		t.Fatalf("pools: %+v", st.Pools)
	}
	return st.Pools[0].Workers
}
