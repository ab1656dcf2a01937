package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
)

// PHPFPM is one php-fpm master with a static pool of 4 children
// listening on a 127.0.0.1 port.
type PHPFPM struct {
	Addr string // 127.0.0.1:port, for fastcgi_pass
	Dir  string // its private directory: config, logs

	ini     string // php.ini given with -c; "" = php-fpm's own
	p       *proc
	stopped sync.Once
}

// StartPHPFPM starts php-fpm with pool appended to its [www] pool
// (php_admin_value lines and such) on a port of its own, choosing a new
// one when it was taken meanwhile, and returns once it accepts
// connections. It runs as root when the test does (nginx and PHP then
// read any temporary directory). It is stopped at cleanup; its logs are
// logged when the test failed.
func StartPHPFPM(t testing.TB, pool string) *PHPFPM {
	t.Helper()
	return StartPHPFPMWithINI(t, pool, "")
}

// StartPHPFPMWithINI is StartPHPFPM with php.ini iniFile instead of
// php-fpm's own (php-fpm -c), so that another PHP server can be given the
// very same settings; "" keeps php-fpm's.
func StartPHPFPMWithINI(t testing.TB, pool, iniFile string) *PHPFPM {
	t.Helper()
	bin := phpFPMBinary(t)
	var f *PHPFPM
	err := retryPorts(func() (bool, error) {
		f = &PHPFPM{Dir: t.TempDir(), ini: iniFile}
		return f.start(bin, FreePort(t), pool)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Stop()
		if t.Failed() {
			t.Logf("php-fpm logs:\n%s", f.logs())
		}
	})
	return f
}

// phpFPMBinary finds Debian's versioned php-fpm (php-fpm8.2, …).
func phpFPMBinary(t testing.TB) string {
	t.Helper()
	bins, _ := filepath.Glob("/usr/sbin/php-fpm*") // the pattern is valid
	if len(bins) == 0 {
		t.Fatal("testbed: /usr/sbin/php-fpm* not found: install the Debian package php-fpm")
	}
	sort.Strings(bins)
	return bins[len(bins)-1]
}

func (f *PHPFPM) start(bin string, port int, pool string) (retry bool, err error) {
	f.Addr = loopback(port)
	conf := filepath.Join(f.Dir, "php-fpm.conf")
	if err := os.WriteFile(conf, []byte(f.config(pool)), 0o644); err != nil {
		return false, fmt.Errorf("testbed: php-fpm config: %w", err)
	}
	args := []string{"-F", "-R", "-y", conf}
	if f.ini != "" {
		args = append(args, "-c", f.ini)
	}
	f.p, retry, err = startListening(procSpec{bin: bin, dir: f.Dir, args: args}, f.Addr, f.logFiles()...)
	return retry, err
}

func (f *PHPFPM) config(pool string) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user = root\ngroup = root\n"
	}
	return fmt.Sprintf(`[global]
pid = %[1]s/php-fpm.pid
error_log = %[1]s/php-fpm.log
daemonize = no

[www]
%[2]slisten = %[3]s
pm = static
pm.max_children = 4
catch_workers_output = yes
php_admin_value[error_log] = %[1]s/php-error.log
php_admin_flag[log_errors] = on
%[4]s
`, f.Dir, user, f.Addr, pool)
}

// Stop stops php-fpm. Idempotent; it also runs at cleanup.
func (f *PHPFPM) Stop() {
	f.stopped.Do(func() { f.p.stop(syscall.SIGTERM) })
}

func (f *PHPFPM) logFiles() []string {
	return []string{filepath.Join(f.Dir, "php-fpm.log"), filepath.Join(f.Dir, "php-error.log")}
}

func (f *PHPFPM) logs() string { return procLogs(f.p, f.logFiles()...) }
