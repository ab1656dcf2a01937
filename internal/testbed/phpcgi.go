package testbed

import (
	"fmt"
	"os/exec"
	"syscall"
	"testing"
)

// PHPCGI returns the path of php-cgi, or fails the test naming the
// Debian package to install.
func PHPCGI(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("php-cgi")
	if err != nil {
		t.Fatalf("testbed: php-cgi not found (install the Debian package php-cgi): %v", err)
	}
	return bin
}

// StartPHPCGI runs `php-cgi -b` on a 127.0.0.1 port of its own with
// children processes accepting on it, as php-fpm would (0: php-cgi
// serves alone), never recycling them (PHP_FCGI_MAX_REQUESTS=0), and
// returns its address once it accepts. Its process group is killed at
// cleanup, children included.
func StartPHPCGI(t testing.TB, children int) string {
	t.Helper()
	bin := PHPCGI(t)
	var addr string
	err := retryPorts(func() (bool, error) {
		addr = loopback(FreePort(t))
		// php-cgi sees the probe connection close without a request.
		p, retry, err := startListening(procSpec{bin: bin, args: []string{"-b", addr}, group: true,
			env: []string{fmt.Sprintf("PHP_FCGI_CHILDREN=%d", children), "PHP_FCGI_MAX_REQUESTS=0"}}, addr)
		if err != nil {
			return retry, err
		}
		t.Cleanup(func() { p.stop(syscall.SIGKILL) })
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
