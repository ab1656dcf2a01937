package testbed

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// NginxFiles is an nginx running a configuration the test wrote itself
// (in a temporary directory, never /etc), with its master process, so
// that `nginx -s reload` reloads it gracefully as in production.
type NginxFiles struct {
	Conf string
	p    *proc
}

// StartNginxFiles starts nginx on conf and returns once addr accepts
// connections; the configuration must name its pid and error log files
// (errorLog, shown when the test fails). It is stopped at cleanup.
func StartNginxFiles(t testing.TB, conf, addr, errorLog string) *NginxFiles {
	t.Helper()
	if _, err := os.Stat(nginxBin); err != nil {
		t.Fatalf("testbed: %s not found: install the Debian package nginx-light (or nginx): %v", nginxBin, err)
	}
	p, _, err := startListening(procSpec{bin: nginxBin, args: []string{"-c", conf, "-g", "daemon off;"}, group: true}, addr, errorLog)
	if err != nil {
		t.Fatal(err)
	}
	n := &NginxFiles{Conf: conf, p: p}
	t.Cleanup(func() {
		p.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("nginx logs:\n%s", procLogs(p, errorLog))
		}
	})
	return n
}

// Bin is the nginx binary.
func (n *NginxFiles) Bin() string { return nginxBin }

// StartApacheFiles starts Apache (apache2, in the foreground, in a
// process group of its own) on the configuration file conf the test
// wrote, and returns once addr accepts connections. It is stopped at
// cleanup; errorLog is shown when the test failed.
func StartApacheFiles(t testing.TB, conf, addr, errorLog string) {
	t.Helper()
	if _, err := os.Stat(apacheBin); err != nil {
		t.Fatalf("testbed: %s not found: install the Debian package apache2-bin (or apache2): %v", apacheBin, err)
	}
	p, _, err := startListening(procSpec{bin: apacheBin, group: true,
		args: []string{"-d", filepath.Dir(conf), "-f", conf, "-DFOREGROUND"}}, addr, errorLog)
	if err != nil {
		t.Fatal(err)
	}
	// Apache binds in its first reading of the configuration and reads
	// it again before it answers: a test changing the files before then
	// would stop it.
	c := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	answers := func() bool {
		resp, err := c.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}
	if !Poll(startTimeout, answers) {
		p.stop(syscall.SIGKILL)
		t.Fatalf("testbed: apache2 on %s does not answer:\n%s", addr, procLogs(p, errorLog))
	}
	t.Cleanup(func() {
		p.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("apache2 logs:\n%s", procLogs(p, errorLog))
		}
	})
}

// ApacheBin is Debian's apache2 binary, which takes apache2ctl's -S, -t
// and -k graceful.
const ApacheBin = apacheBin
