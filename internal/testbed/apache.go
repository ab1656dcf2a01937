package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const (
	apacheBin     = "/usr/sbin/apache2"
	apacheModules = "/usr/lib/apache2/modules"
)

// apacheBaseModules are loaded into every Apache: the event MPM Debian
// runs, and what the access, index and type settings testbed and every
// test's docroot need. Debian's apache2 has log_config and unixd built in.
var apacheBaseModules = []string{"mpm_event", "authz_core", "dir", "mime"}

// ApacheConfig is what a test puts into Apache's config; testbed writes
// the rest: its own ServerRoot with pid, error log and runtime files, the
// event MPM with one child process, Listen on its port and the access log
// that Requests reads, for the main server and the virtual host alike.
type ApacheConfig struct {
	// Modules are loaded after testbed's own (mpm_event, authz_core, dir,
	// mime): names of Debian's /usr/lib/apache2/modules/mod_NAME.so such
	// as "proxy_fcgi" or "remoteip".
	Modules []string
	// Server holds server-wide directives, after the modules and before
	// the virtual host: LogFormat, Include of a conf-enabled snippet, ….
	Server string
	// VirtualHost holds the directives of the one <VirtualHost> on the
	// listen address: DocumentRoot, <Directory>, handlers, CustomLog.
	VirtualHost string
}

// Apache is one Apache 2.4 (Debian's apache2) serving on a 127.0.0.1 port
// in the foreground with the event MPM, as in production, so keep-alive
// and its timeouts behave as they do there.
type Apache struct {
	URL  string // http://127.0.0.1:port
	Addr string // 127.0.0.1:port
	Dir  string // its private directory: config, logs, runtime files

	p       *proc
	stopped sync.Once
}

// StartApache starts Apache with cfg on a port of its own, choosing a new
// one when it was taken meanwhile, and returns once it accepts
// connections. As root its children run as www-data, since Apache refuses
// to serve as root: the files it serves itself must be readable by every
// user (PublicDir). It is stopped at cleanup; its logs are logged when the
// test failed.
func StartApache(t testing.TB, cfg ApacheConfig) *Apache {
	t.Helper()
	if _, err := os.Stat(apacheBin); err != nil {
		t.Fatalf("testbed: %s not found: install the Debian package apache2-bin (or apache2): %v", apacheBin, err)
	}
	var a *Apache
	err := retryPorts(func() (bool, error) {
		a = &Apache{Dir: t.TempDir()}
		return a.start(FreePort(t), cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Stop()
		if t.Failed() {
			t.Logf("apache2 logs:\n%s", a.logs())
		}
	})
	return a
}

func (a *Apache) start(port int, cfg ApacheConfig) (retry bool, err error) {
	a.Addr = loopback(port)
	a.URL = "http://" + a.Addr
	conf := filepath.Join(a.Dir, "apache2.conf")
	if err := os.WriteFile(conf, []byte(a.config(cfg)), 0o644); err != nil {
		return false, fmt.Errorf("testbed: apache2 config: %w", err)
	}
	// Its own process group: a kill at cleanup reaches the children too.
	a.p, retry, err = startListening(procSpec{bin: apacheBin, dir: a.Dir, group: true,
		args: []string{"-d", a.Dir, "-f", conf, "-DFOREGROUND"}}, a.Addr, a.errorLog())
	return retry, err
}

func (a *Apache) errorLog() string { return filepath.Join(a.Dir, "apache-error.log") }

func (a *Apache) accessLog() string { return filepath.Join(a.Dir, "access.log") }

func (a *Apache) config(cfg ApacheConfig) string {
	var modules strings.Builder
	for _, m := range slices.Concat(apacheBaseModules, cfg.Modules) {
		fmt.Fprintf(&modules, "LoadModule %[1]s_module %[2]s/mod_%[1]s.so\n", m, apacheModules)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "User www-data\nGroup www-data\n"
	}
	// GlobalLog, unlike CustomLog, still logs a virtual host that has
	// CustomLog lines of its own.
	return fmt.Sprintf(`ServerRoot %[1]s
PidFile %[1]s/apache2.pid
DefaultRuntimeDir %[1]s
ErrorLog %[2]s
LogLevel warn
ServerName 127.0.0.1
Listen %[3]s
%[4]s%[5]sTypesConfig /dev/null

# The event MPM with one child of 8 threads: small on a shared machine.
StartServers 1
ServerLimit 1
ThreadsPerChild 8
MaxRequestWorkers 8
MinSpareThreads 1
MaxSpareThreads 8

LogFormat "%%m %%U%%q %%>s" counts
GlobalLog %[6]s counts

%[7]s
<VirtualHost %[3]s>
	ServerName 127.0.0.1
%[8]s
</VirtualHost>
`, a.Dir, a.errorLog(), a.Addr, modules.String(), user, a.accessLog(), cfg.Server, cfg.VirtualHost)
}

// Stop stops Apache and its children. Idempotent; it also runs at
// cleanup.
func (a *Apache) Stop() {
	a.stopped.Do(func() { a.p.stop(syscall.SIGTERM) })
}

func (a *Apache) logs() string { return procLogs(a.p, a.errorLog()) }

// Requests counts the access-log lines whose request path (the URI before
// any '?') equals path. Apache writes a line just after its response, so
// a count right after a request may lag: see WaitRequests and SyncLog.
func (a *Apache) Requests(path string) int { return countRequests(a.accessLog(), path) }

// WaitRequests polls Requests(path) until it reaches atLeast or 5 s pass,
// then syncs the log (SyncLog) and returns the count.
func (a *Apache) WaitRequests(t testing.TB, path string, atLeast int) int {
	t.Helper()
	return waitRequests(t, a.Requests, a.SyncLog, path, atLeast)
}

// SyncLog requests a path of its own and waits for that line. Unlike
// nginx's one worker process, Apache's threads each log the request they
// served just after its response: a request answered by another thread a
// moment before the sync request is almost always logged before it, but
// not certainly. A count that must be reached is waited for
// (WaitRequests); a count that must not grow is as good as this bound.
func (a *Apache) SyncLog(t testing.TB) {
	t.Helper()
	syncLog(t, "apache2", a.URL, a.Requests)
}
