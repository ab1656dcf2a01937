package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// build is the ramjet binary of this test process, built on first use.
var build struct {
	once sync.Once
	dir  string // temporary directory holding it; removed by Main
	bin  string // its path; "" when the build failed
	err  error  // the build failure, with the compiler's output
}

// Main runs the tests and then removes what testbed built. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }
//
// (with any setup of the package's own before it) in every package that
// starts ramjet.
func Main(m *testing.M) int {
	code := m.Run()
	build.once.Do(func() {}) // orders the read below after a build
	if build.dir != "" {
		if err := os.RemoveAll(build.dir); err != nil {
			fmt.Fprintf(os.Stderr, "testbed: remove %s: %v\n", build.dir, err)
		}
	}
	return code
}

// Binary returns the path of the ramjet binary built from this repository,
// building it once per test process. A failed build fails every test that
// asks, with the compiler's output; nothing is skipped.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(buildRamjet)
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

func buildRamjet() {
	root, err := moduleRoot()
	if err != nil {
		build.err = err
		return
	}
	build.dir, err = os.MkdirTemp("", "testbed-ramjet-")
	if err != nil {
		build.err = fmt.Errorf("testbed: build dir: %w", err)
		return
	}
	bin := filepath.Join(build.dir, "ramjet")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ramjet")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		build.err = fmt.Errorf("testbed: go build ./cmd/ramjet: %w\n%s", err, out)
		return
	}
	build.bin = bin
}

// moduleRoot is the directory of the go.mod that holds the test's package
// (tests run in their package's directory).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("testbed: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("testbed: not inside a Go module (go env GOMOD: %q)", mod)
	}
	return filepath.Dir(mod), nil
}
