package testbed

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

const nginxBin = "/usr/sbin/nginx"

// NginxConfig is what a test puts into nginx's config; testbed writes the
// rest (one worker process in the foreground, pid, logs and temp paths in
// its own directory, the listen address).
type NginxConfig struct {
	// Main holds directives for the top level, outside http: load_module
	// (before everything, as nginx wants it) and stream blocks.
	Main string
	// HTTP holds directives for the http block, before the server block
	// (types, client_max_body_size, …).
	HTTP string
	// Server holds the server block's directives after listen and
	// server_name: root, index, locations. `access_log off;` here turns
	// off the access log that Requests reads.
	Server string
}

// Nginx is one nginx serving on a 127.0.0.1 port.
type Nginx struct {
	URL  string // http://127.0.0.1:port
	Addr string // 127.0.0.1:port
	Dir  string // its private directory: config, logs, temp files

	p       *proc
	cfg     NginxConfig
	stopped sync.Once
}

// StartNginx starts nginx with cfg on a port of its own, choosing a new
// one when it was taken meanwhile, and returns once it accepts
// connections. It is stopped at cleanup; its logs are logged when the test
// failed.
func StartNginx(t testing.TB, cfg NginxConfig) *Nginx {
	t.Helper()
	if _, err := os.Stat(nginxBin); err != nil {
		t.Fatalf("testbed: %s not found: install the Debian package nginx-light (or nginx): %v", nginxBin, err)
	}
	var n *Nginx
	err := retryPorts(func() (bool, error) {
		n = &Nginx{Dir: t.TempDir()}
		return n.start(FreePort(t), cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		if t.Failed() {
			t.Logf("nginx logs:\n%s", n.logs())
		}
	})
	return n
}

func (n *Nginx) start(port int, cfg NginxConfig) (retry bool, err error) {
	n.cfg = cfg
	n.Addr = loopback(port)
	n.URL = "http://" + n.Addr
	if err := os.MkdirAll(filepath.Join(n.Dir, "tmp"), 0o755); err != nil {
		return false, fmt.Errorf("testbed: nginx dir: %w", err)
	}
	conf := filepath.Join(n.Dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(n.config(cfg)), 0o644); err != nil {
		return false, fmt.Errorf("testbed: nginx config: %w", err)
	}
	n.p, retry, err = startListening(procSpec{bin: nginxBin, dir: n.Dir,
		args: []string{"-p", n.Dir, "-c", conf, "-e", n.errorLog()}}, n.Addr, n.errorLog())
	return retry, err
}

func (n *Nginx) errorLog() string { return filepath.Join(n.Dir, "nginx-error.log") }

func (n *Nginx) config(cfg NginxConfig) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user root root;\n"
	}
	return fmt.Sprintf(`%[6]s
daemon off;
master_process off;
worker_processes 1;
%[1]spid %[2]s/nginx.pid;
error_log %[2]s/nginx-error.log warn;
events {
	worker_connections 1024;
}
http {
	default_type application/octet-stream;
	log_format counts '$request_method $request_uri $status';
	access_log %[2]s/access.log counts;
	client_body_temp_path %[2]s/tmp/body;
	proxy_temp_path %[2]s/tmp/proxy;
	fastcgi_temp_path %[2]s/tmp/fastcgi;
	uwsgi_temp_path %[2]s/tmp/uwsgi;
	scgi_temp_path %[2]s/tmp/scgi;
	server_tokens off;
%[3]s
	server {
		listen %[4]s;
		server_name _;
%[5]s
	}
}
`, user, n.Dir, cfg.HTTP, n.Addr, cfg.Server, cfg.Main)
}

// Stop stops nginx (to simulate an origin that is down). Idempotent; it
// also runs at cleanup.
func (n *Nginx) Stop() {
	n.stopped.Do(func() { n.p.stop(syscall.SIGTERM) })
}

// Down stops nginx as an origin restart does: connections are refused
// until Up starts it again on the same port with the same config. Not
// after Stop.
func (n *Nginx) Down() { n.p.stop(syscall.SIGTERM) }

// Up starts nginx again after Down; a running nginx is left as it is
// (starting another on its port would fail and lose the running one's
// handle, which would then outlive the test).
func (n *Nginx) Up(t testing.TB) {
	t.Helper()
	if !n.p.exited() {
		return
	}
	_, ps, _ := net.SplitHostPort(n.Addr) // our own loopback(port)
	port, _ := strconv.Atoi(ps)
	var err error
	Poll(10*time.Second, func() bool {
		var retry bool
		retry, err = n.start(port, n.cfg)
		return err == nil || !retry
	})
	if err != nil {
		t.Fatalf("testbed: start nginx again on %s: %v", n.Addr, err)
	}
}

func (n *Nginx) logs() string { return procLogs(n.p, n.errorLog()) }

// Requests counts the access-log lines whose request path (the URI before
// any '?') equals path. nginx writes a line just after its response, so
// a count right after a request may lag: see WaitRequests and SyncLog.
func (n *Nginx) Requests(path string) int {
	return countRequests(filepath.Join(n.Dir, "access.log"), path)
}

// WaitRequests polls Requests(path) until it reaches atLeast or 5 s pass,
// then syncs the log (SyncLog) and returns the count: a request beyond
// atLeast that nginx had answered by then is counted too, so a test can
// assert that there was none.
func (n *Nginx) WaitRequests(t testing.TB, path string, atLeast int) int {
	t.Helper()
	return waitRequests(t, n.Requests, n.SyncLog, path, atLeast)
}

// SyncLog returns once every request nginx had answered before the call
// is in the access log: it requests a path of its own and waits for that
// line (one worker process logs in order). A test asserting that a
// request did not reach nginx calls it first, which also proves that the
// log records what reaches nginx.
func (n *Nginx) SyncLog(t testing.TB) {
	t.Helper()
	syncLog(t, "nginx", n.URL, n.Requests)
}
