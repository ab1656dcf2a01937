package adoption

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
)

// unifiedDiff is `diff -u` of a file's two versions, labelled with its
// name.
func unifiedDiff(name string, a, b []byte) (string, error) {
	dir, err := os.MkdirTemp("", "ramjet-adopt-diff")
	if err != nil {
		return "", fmt.Errorf("adoption: diff: %w", err)
	}
	defer os.RemoveAll(dir)
	fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := errors.Join(os.WriteFile(fa, a, 0o600), os.WriteFile(fb, b, 0o600)); err != nil {
		return "", fmt.Errorf("adoption: diff: %w", err)
	}
	out, err := exec.Command("diff", "-u", "--label", name, "--label", name, fa, fb).Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: they differ
		return "", fmt.Errorf("adoption: diff %s: %w", name, err)
	}
	return string(out), nil
}

// freePort is a loopback address nothing listens on now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("adoption: a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
