// Package wordpress_test runs a real WordPress (Debian's package) with the
// ramjet-cache plugin behind real ramjet nodes and checks, as a browser
// would, that pages are cached, purged exactly and never leak between
// users. This file starts the processes: MariaDB on a private socket,
// nginx + php-fpm on ephemeral loopback ports serving a private copy of
// /usr/share/wordpress, redis-server, and the ramjet binary built from
// this repository. Nothing outside temporary directories is touched.
package wordpress_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	wpSource   = "/usr/share/wordpress"
	nginxBin   = "/usr/sbin/nginx"
	phpFPMBin  = "/usr/sbin/php-fpm8.2"
	mariadbBin = "/usr/sbin/mariadbd"

	startTimeout = 20 * time.Second // a process must answer within this
	stopTimeout  = 10 * time.Second // and exit within this after SIGTERM
	phpTimeout   = 60 * time.Second // one PHP CLI run (install, edit)

	siteHost   = "wp.test" // WordPress's home host; every request carries it
	adminToken = "e2e-secret-token"
)

// Set once by TestMain.
var (
	ramjetBin   string // built binary; "" when the build failed
	buildOutput string
	missing     []string // Debian packages not installed
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	for _, need := range []struct{ path, pkg string }{
		{wpSource + "/wp-load.php", "wordpress"},
		{mariadbBin, "mariadb-server"},
		{"/usr/bin/mariadb-install-db", "mariadb-server"},
		{"/usr/bin/php", "php-cli"},
		{nginxBin, "nginx-light"},
		{phpFPMBin, "php-fpm"},
		{"/usr/bin/redis-server", "redis-server"},
	} {
		if _, err := os.Stat(need.path); err != nil {
			missing = append(missing, need.pkg)
		}
	}
	if out, err := exec.Command("php", "-r", "exit(function_exists('mysqli_connect') ? 0 : 1);").CombinedOutput(); err != nil {
		missing = append(missing, fmt.Sprintf("php-mysql (%v %s)", err, out))
	}
	tmp, err := os.MkdirTemp("", "ramjet-wp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	bin := filepath.Join(tmp, "ramjet")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ramjet")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		buildOutput = fmt.Sprintf("go build ./cmd/ramjet failed: %v\n%s", err, out)
	} else {
		ramjetBin = bin
	}
	return m.Run()
}

// repoRoot is the directory of the module's go.mod.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return filepath.Abs("../../..")
	}
	return filepath.Dir(mod), nil
}

// requireStack fails, never skips, when Debian packages are missing:
// .ci/deps installs them.
func requireStack(t *testing.T) {
	t.Helper()
	if len(missing) > 0 {
		msg := fmt.Sprintf("missing Debian packages %v (install: apt-get install --no-install-recommends wordpress mariadb-server php-mysql php-cli php-fpm nginx-light redis-server, or run .ci/deps)", missing)
		t.Fatal(msg)
	}
	if ramjetBin == "" {
		t.Fatal(buildOutput)
	}
}

// ---------------------------------------------------------------------------
// Processes

// syncBuffer collects a child's output.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is a started child whose exit one goroutine observes.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed once Wait returned
}

// startProc starts a child and stops it (SIGTERM, then SIGKILL) at cleanup,
// logging its output if the test failed.
func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: filepath.Base(name), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit status is not needed, only the exit
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- %s output:\n%s", p.name, p.out)
		}
	})
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits stopTimeout, then kills.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM) // an exited process is fine
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill() // best effort; waited for below
		<-p.done
	}
}

// waitReady polls ready every 50 ms until it succeeds, the process exits,
// or startTimeout passes.
func (p *proc) waitReady(t *testing.T, what string, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		err := ready()
		if err == nil {
			return
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("%s not ready (exited=%v): %v\n%s", what, p.exited(), err, p.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close() // held until all are chosen, so they differ
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// runPHP runs a PHP CLI script with a time limit and returns its stdout.
func runPHP(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("php", append([]string{"-d", "display_errors=stderr", "-d", "error_reporting=E_ALL & ~E_DEPRECATED"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("php %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
	case <-time.After(phpTimeout):
		_ = cmd.Process.Kill() // best effort; the test fails anyway
		<-done
		t.Fatalf("php %s: still running after %v\n%s", strings.Join(args, " "), phpTimeout, stderr.String())
	}
	if s := stderr.String(); s != "" {
		t.Logf("php %s stderr:\n%s", args[0], s)
	}
	return stdout.String()
}

// ---------------------------------------------------------------------------
// MariaDB

// startMariaDB initialises a datadir and runs mariadbd on a unix socket
// only, then creates the database and user WordPress uses. It returns the
// socket path.
func startMariaDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sockDir, err := os.MkdirTemp("", "rjdb") // unix socket paths are short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	// In docroot mode ramjet runs PHP as nobody, which must reach the socket.
	if err := os.Chmod(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "db.sock")
	cnf := filepath.Join(dir, "my.cnf")
	user := ""
	if os.Geteuid() == 0 {
		user = "user=root\n"
	}
	conf := fmt.Sprintf("[mysqld]\n%sdatadir=%s/data\nsocket=%s\npid-file=%s/db.pid\nskip-networking\nskip-name-resolve\n"+
		"innodb_buffer_pool_size=32M\ninnodb_log_file_size=8M\ninnodb_flush_log_at_trx_commit=0\nsync_binlog=0\nperformance_schema=OFF\n"+
		"log-error=%s/error.log\n", user, dir, sock, dir, dir)
	if err := os.WriteFile(cnf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := exec.Command("mariadb-install-db", "--defaults-file="+cnf, "--auth-root-authentication-method=socket", "--skip-test-db")
	if out, err := runBounded(inst, phpTimeout); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	p := startProc(t, mariadbBin, "--defaults-file="+cnf)
	p.waitReady(t, "mariadbd", func() error {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
	sql := "CREATE DATABASE wp; CREATE USER 'wp'@'localhost' IDENTIFIED BY 'wp-pass'; GRANT ALL ON wp.* TO 'wp'@'localhost';"
	if out, err := runBounded(exec.Command("mariadb", "--socket="+sock, "-uroot", "-e", sql), phpTimeout); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log")) // for the message only
		t.Fatalf("create database: %v\n%s\n%s", err, out, log)
	}
	return sock
}

// runBounded runs cmd to completion within d and returns its combined output.
func runBounded(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill() // best effort; reported below
		<-done
		return out.String(), fmt.Errorf("still running after %v", d)
	}
}

// ---------------------------------------------------------------------------
// WordPress

// site is an installed WordPress.
type site struct {
	dir     string         // temporary directory holding docroot and logs
	docroot string         // the WordPress tree
	origin  string         // nginx's http://127.0.0.1:port, once started
	ids     map[string]int // created objects, from setup.php
}

// installWordPress copies Debian's WordPress into a temporary docroot (PHP
// resolves __DIR__ through symlinks, so a symlink tree would read Debian's
// /etc/wordpress config), writes its own wp-config.php and wp-content with
// the plugin (symlinked) and the test theme, installs it from PHP CLI and
// starts nginx + php-fpm.
func installWordPress(t *testing.T, dbSock, adminURL string) *site {
	t.Helper()
	dir := t.TempDir()
	// In docroot mode ramjet runs PHP as nobody (never as root): it must be
	// able to walk down to the docroot.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	docroot := filepath.Join(dir, "wp")
	if out, err := runBounded(exec.Command("cp", "-rL", wpSource, docroot), phpTimeout); err != nil {
		t.Fatalf("copy %s: %v\n%s", wpSource, err, out)
	}
	content := filepath.Join(docroot, "wp-content")
	if err := os.RemoveAll(content); err != nil {
		t.Fatal(err)
	}
	plugin, err := filepath.Abs("../ramjet-cache")
	if err != nil {
		t.Fatal(err)
	}
	theme, err := filepath.Abs("testdata/ramjet-e2e-theme")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"plugins", "themes", "uploads"} {
		if err := os.MkdirAll(filepath.Join(content, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"plugins/ramjet-cache": plugin, "themes/ramjet-e2e": theme} {
		if err := os.Symlink(target, filepath.Join(content, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(docroot, "wp-config.php"), []byte(wpConfig(dbSock, adminURL, content)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runPHP(t, nil, "testdata/setup.php", docroot)
	s := &site{dir: dir, docroot: docroot, ids: map[string]int{}}
	if err := json.Unmarshal([]byte(lastLine(out)), &s.ids); err != nil {
		t.Fatalf("setup.php output %q: %v", out, err)
	}
	return s
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func wpConfig(dbSock, adminURL, content string) string {
	return fmt.Sprintf(`<?php
define( 'DB_NAME', 'wp' );
define( 'DB_USER', 'wp' );
define( 'DB_PASSWORD', 'wp-pass' );
define( 'DB_HOST', 'localhost:%s' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
define( 'AUTH_KEY', 'e2e-auth' );
define( 'SECURE_AUTH_KEY', 'e2e-secure-auth' );
define( 'LOGGED_IN_KEY', 'e2e-logged-in' );
define( 'NONCE_KEY', 'e2e-nonce' );
define( 'AUTH_SALT', 'e2e-auth-salt' );
define( 'SECURE_AUTH_SALT', 'e2e-secure-auth-salt' );
define( 'LOGGED_IN_SALT', 'e2e-logged-in-salt' );
define( 'NONCE_SALT', 'e2e-nonce-salt' );
define( 'WP_CONTENT_DIR', '%s' );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
define( 'WP_ACCESSIBLE_HOSTS', '127.0.0.1' );
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_AUTO_UPDATE_CORE', false );
define( 'RAMJET_ADMIN_URL', '%s' );
define( 'RAMJET_ADMIN_TOKEN', '%s' );
$table_prefix = 'wp_';
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
`, dbSock, content, adminURL, adminToken)
}

// startOrigin runs php-fpm and nginx for docroot on ephemeral loopback
// ports and returns nginx's URL once WordPress answers.
func startOrigin(t *testing.T, dir, docroot string) string {
	t.Helper()
	ports := freePorts(t, 2)
	web, fpm := ports[0], ports[1]
	fpmConf := filepath.Join(dir, "php-fpm.conf")
	writeFile(t, fpmConf, fmt.Sprintf(`[global]
pid = %[1]s/php-fpm.pid
error_log = %[1]s/php-fpm.log
daemonize = no

[www]
user = root
group = root
listen = 127.0.0.1:%[2]d
pm = static
pm.max_children = 4
catch_workers_output = yes
php_admin_value[error_log] = %[1]s/php-error.log
php_admin_flag[log_errors] = on
php_admin_flag[display_errors] = off
php_admin_value[memory_limit] = 256M
`, dir, fpm))
	nginxConf := filepath.Join(dir, "nginx.conf")
	writeFile(t, nginxConf, fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
user root root;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log warn;
events { worker_connections 256; }
http {
	default_type application/octet-stream;
	access_log off;
	client_body_temp_path %[1]s/tmp-body;
	fastcgi_temp_path %[1]s/tmp-fastcgi;
	proxy_temp_path %[1]s/tmp-proxy;
	uwsgi_temp_path %[1]s/tmp-uwsgi;
	scgi_temp_path %[1]s/tmp-scgi;
	server_tokens off;
	server {
		listen 127.0.0.1:%[2]d;
		server_name _;
		root %[3]s;
		index index.php;
		location / { try_files $uri $uri/ /index.php?$args; }
		location ~ \.php$ {
			try_files $uri =404;
			fastcgi_pass 127.0.0.1:%[4]d;
			fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
			include /etc/nginx/fastcgi_params;
			fastcgi_read_timeout 60s;
		}
	}
}
`, dir, web, docroot, fpm))
	if os.Geteuid() != 0 {
		t.Fatal("the origin runs nginx and php-fpm as root (user root in their configs): run the tests as root, as .ci/run does")
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{"nginx-error.log", "php-fpm.log", "php-error.log"} {
				b, _ := os.ReadFile(filepath.Join(dir, f)) // a missing log is fine
				t.Logf("--- %s:\n%s", f, b)
			}
		}
	})
	fp := startProc(t, phpFPMBin, "-F", "-R", "-y", fpmConf)
	np := startProc(t, nginxBin, "-p", dir, "-c", nginxConf, "-e", filepath.Join(dir, "nginx-error.log"))
	origin := fmt.Sprintf("http://127.0.0.1:%d", web)
	c := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	np.waitReady(t, "nginx + php-fpm + WordPress", func() error {
		if fp.exited() {
			return errors.New("php-fpm exited")
		}
		req, _ := http.NewRequest("GET", origin+"/", nil) // constant URL
		req.Host = siteHost
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET / answered %s", resp.Status)
		}
		return nil
	})
	return origin
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ---------------------------------------------------------------------------
// redis-server and ramjet

// startRedis runs redis-server without persistence on a loopback port and
// returns its URL.
func startRedis(t *testing.T) string {
	t.Helper()
	port := freePorts(t, 1)[0]
	dir := t.TempDir()
	p := startProc(t, "/usr/bin/redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p.waitReady(t, "redis-server", func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.SetDeadline(time.Now().Add(time.Second)); err != nil {
			return err
		}
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return err
		}
		buf := make([]byte, 7)
		n, err := c.Read(buf)
		if err != nil || !strings.HasPrefix(string(buf[:n]), "+PONG") {
			return fmt.Errorf("PING: %q %v", buf[:n], err)
		}
		return nil
	})
	return "redis://" + addr + "/0"
}

// node is one running ramjet.
type node struct {
	name     string
	url      string // main listener
	adminURL string
	p        *proc
}

// reserveNode picks the ports of a ramjet node before it starts, so
// WordPress's config can name its admin URL.
func reserveNode(t *testing.T, name string) *node {
	ports := freePorts(t, 2)
	return &node{
		name:     name,
		url:      fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		adminURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
	}
}

// start runs `ramjet serve` with a config file in front of origin (or with
// extra flags such as --docroot), with Redis fan-out, and waits for /healthz.
func (n *node) start(t *testing.T, origin, redisURL string, extra ...string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ramjet.yaml")
	originYAML := ""
	if origin != "" {
		originYAML = fmt.Sprintf("origin:\n  servers: [%q]\n", origin)
	}
	writeFile(t, cfg, fmt.Sprintf(`listen: %q
admin:
  listen: %q
  token: %q
%spurge:
  redis: %q
  node: %q
defaults:
  grace: 0s
  debug_headers: true
`, strings.TrimPrefix(n.url, "http://"), strings.TrimPrefix(n.adminURL, "http://"), adminToken, originYAML, redisURL, n.name))
	n.p = startProc(t, ramjetBin, append([]string{"serve", "--config", cfg}, extra...)...)
	c := &http.Client{Timeout: time.Second}
	n.p.waitReady(t, "ramjet "+n.name, func() error {
		resp, err := c.Get(n.adminURL + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/healthz: %s", resp.Status)
		}
		return nil
	})
}
