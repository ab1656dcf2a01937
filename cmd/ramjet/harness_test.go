// End-to-end harness: TestMain builds the ramjet binary once; each test starts
// its own real origin (nginx + php-fpm serving testdata/www on ephemeral
// loopback ports) and its own ramjet in front of it, and talks to both over
// plain HTTP. Nothing is written into the repository: the docroot is copied
// into a temporary directory and the large files are generated there.
//
// The tests live in package main_test so that no identifier here can collide
// with the command's own package main.
package main_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	nginxBin  = "/usr/sbin/nginx"
	phpFPMBin = "/usr/sbin/php-fpm8.2"

	startTimeout = 10 * time.Second // a process must answer within this
	stopTimeout  = 10 * time.Second // a process must exit within this after SIGTERM

	size2MiB   = 2 << 20
	size300MiB = 300 << 20
)

// Set once by TestMain.
var (
	ramjetBin   string // path of the built binary; empty if the build failed
	buildOutput string // go build output when the build failed
	docroot     string // copy of testdata/www plus generated files
)

// TestMain builds the binary and prepares the shared docroot. A failed build
// does not skip anything: every test that needs the binary fails with the
// compiler output (see startRamjet).
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "ramjet-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	bin := filepath.Join(tmp, "ramjet")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		buildOutput = fmt.Sprintf("go build failed: %v\n%s", err, out)
		fmt.Fprintln(os.Stderr, "e2e:", buildOutput)
	} else {
		ramjetBin = bin
	}

	docroot = filepath.Join(tmp, "www")
	if err := prepareDocroot(docroot); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: docroot:", err)
		return 1
	}
	return m.Run()
}

// prepareDocroot copies testdata/www to dir and generates the large files:
// static/big2m.bin (random bytes), static/big2m.txt (compressible text),
// stream/big300m.bin and static/big300m.bin (sparse, with random markers).
func prepareDocroot(dir string) error {
	err := os.CopyFS(dir, os.DirFS("testdata/www"))
	if err != nil {
		return fmt.Errorf("copy testdata/www: %w", err)
	}
	for _, d := range []string{"static", "stream"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewChaCha8([32]byte{'r', 'a', 'm', 'j', 'e', 't'}))
	bin := make([]byte, size2MiB)
	for i := range bin {
		bin[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(filepath.Join(dir, "static/big2m.bin"), bin, 0o644); err != nil {
		return err
	}
	words := []string{"cache", "proxy", "nginx", "origin", "stale", "fresh", "vary", "purge", "tag", "hit", "miss"}
	var txt bytes.Buffer
	for txt.Len() < size2MiB {
		txt.WriteString(words[rng.IntN(len(words))])
		txt.WriteByte(" \n"[rng.IntN(2)])
	}
	if err := os.WriteFile(filepath.Join(dir, "static/big2m.txt"), txt.Bytes()[:size2MiB], 0o644); err != nil {
		return err
	}
	for _, name := range []string{"stream/big300m.bin", "static/big300m.bin"} {
		if err := writeSparse(filepath.Join(dir, name), size300MiB, rng); err != nil {
			return err
		}
	}
	return nil
}

// writeSparse creates a sparse file of size bytes with 4 KiB of random data
// every 8 MiB, so truncation or reordering changes its SHA-256.
func writeSparse(path string, size int64, rng *rand.Rand) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	mark := make([]byte, 4096)
	for off := int64(0); off < size; off += 8 << 20 {
		for i := range mark {
			mark[i] = byte(rng.Uint32())
		}
		if _, err := f.WriteAt(mark, off); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

var docrootSums sync.Map // relative path -> hex sha256

// docrootSHA256 returns the hex SHA-256 of a docroot file, computed once.
func docrootSHA256(t testing.TB, rel string) string {
	t.Helper()
	if s, ok := docrootSums.Load(rel); ok {
		return s.(string)
	}
	f, err := os.Open(filepath.Join(docroot, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	s := hex.EncodeToString(h.Sum(nil))
	docrootSums.Store(rel, s)
	return s
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ---------------------------------------------------------------------------
// Processes

// syncBuffer collects a child's stdout and stderr.
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

// proc is a started child process whose exit is observed by one goroutine.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed after Wait returns; err is then set
	err  error
}

func startProc(name string, args []string, dir string) (*proc, error) {
	p := &proc{name: filepath.Base(name), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to exit and reports whether it did.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// exitCode is valid after done is closed: -1 for death by signal.
func (p *proc) exitCode() int {
	return p.cmd.ProcessState.ExitCode()
}

// stop sends sig, waits stopTimeout, then kills. It reports whether the
// process exited by itself.
func (p *proc) stop(sig os.Signal) bool {
	if p.exited() {
		return true
	}
	_ = p.cmd.Process.Signal(sig) // an already-exited process is fine
	if p.wait(stopTimeout) {
		return true
	}
	_ = p.cmd.Process.Kill() // best effort; we wait below
	<-p.done
	return false
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// Callers retry when a port is taken before they bind it.
func freePorts(t testing.TB, n int) []int {
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

// freePort returns one loopback port that was free a moment ago.
func freePort(t testing.TB) int { return freePorts(t, 1)[0] }

func addrInUse(out string) bool {
	return strings.Contains(out, "address already in use") || strings.Contains(out, "Address already in use")
}

// pollUntil calls f every 20 ms until it returns true or d passes.
func pollUntil(d time.Duration, f func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if f() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------
// Origin: nginx + php-fpm

type origin struct {
	URL     string // http://127.0.0.1:port
	Addr    string // 127.0.0.1:port
	dir     string
	markDir string
	nginx   *proc
	fpm     *proc
	stopped sync.Once
}

// startOrigin starts nginx and php-fpm on ephemeral loopback ports and waits
// until both answer. Both are stopped when the test ends.
func startOrigin(t testing.TB) *origin {
	t.Helper()
	for _, bin := range []struct{ path, pkg string }{{nginxBin, "nginx-light (or nginx)"}, {phpFPMBin, "php8.2-fpm"}} {
		if _, err := os.Stat(bin.path); err != nil {
			t.Fatalf("%s not found: the end-to-end tests need it; install it with `apt-get install %s`", bin.path, bin.pkg)
		}
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		o, retry, err := tryStartOrigin(t)
		if err == nil {
			return o
		}
		lastErr = err
		if !retry {
			break
		}
	}
	t.Fatalf("origin: %v", lastErr)
	return nil
}

func tryStartOrigin(t testing.TB) (o *origin, retry bool, err error) {
	dir := t.TempDir()
	o = &origin{dir: dir, markDir: filepath.Join(dir, "marks")}
	for _, d := range []string{"marks", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, false, err
		}
	}
	ports := freePorts(t, 2)
	webPort, fpmPort := ports[0], ports[1]
	o.Addr = fmt.Sprintf("127.0.0.1:%d", webPort)
	o.URL = "http://" + o.Addr

	fpmConf := filepath.Join(dir, "php-fpm.conf")
	if err := os.WriteFile(fpmConf, []byte(fpmConfig(dir, fpmPort)), 0o644); err != nil {
		return nil, false, err
	}
	nginxConf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(nginxConf, []byte(nginxConfig(dir, webPort, fpmPort)), 0o644); err != nil {
		return nil, false, err
	}
	if err := os.WriteFile(filepath.Join(dir, "fastcgi.params"), []byte(fastCGIParams(dir)), 0o644); err != nil {
		return nil, false, err
	}

	o.fpm, err = startProc(phpFPMBin, []string{"-F", "-R", "-y", fpmConf}, dir)
	if err != nil {
		return nil, false, err
	}
	o.nginx, err = startProc(nginxBin, []string{"-p", dir, "-c", nginxConf, "-e", filepath.Join(dir, "nginx-error.log")}, dir)
	if err != nil {
		o.fpm.stop(syscall.SIGTERM)
		return nil, false, err
	}
	// started, not o: a failed attempt returns a nil o (named result),
	// and this cleanup still has to stop what it started.
	started := o
	t.Cleanup(func() {
		started.Stop()
		if t.Failed() {
			t.Logf("origin logs:\n%s", started.logs())
		}
	})

	c := &http.Client{Timeout: time.Second}
	ok := pollUntil(startTimeout, func() bool {
		if o.nginx.exited() || o.fpm.exited() {
			return true
		}
		for _, path := range []string{"/static/page725.html", "/e/__ready"} {
			resp, err := c.Get(o.URL + path)
			if err != nil {
				return false
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return false
			}
		}
		return true
	})
	c.CloseIdleConnections()
	if o.nginx.exited() || o.fpm.exited() || !ok {
		o.Stop()
		logs := o.logs()
		return nil, addrInUse(logs), fmt.Errorf("nginx/php-fpm did not come up (ready poll ok=%v):\n%s", ok, logs)
	}
	return o, false, nil
}

// Stop stops nginx and php-fpm (to simulate an origin that is down). It is
// idempotent and also runs at test cleanup.
func (o *origin) Stop() {
	o.stopped.Do(func() {
		o.nginx.stop(syscall.SIGTERM)
		o.fpm.stop(syscall.SIGTERM)
	})
}

func (o *origin) logs() string {
	var b strings.Builder
	for _, name := range []string{"nginx-error.log", "php-fpm.log", "php-error.log"} {
		data, _ := os.ReadFile(filepath.Join(o.dir, name)) // a missing log is fine
		fmt.Fprintf(&b, "--- %s\n%s", name, data)
	}
	fmt.Fprintf(&b, "--- nginx output\n%s--- php-fpm output\n%s", o.nginx.out, o.fpm.out)
	return b.String()
}

// Requests counts the access-log lines whose request path (the URI before
// any '?') equals path. Test pages use unique paths (/e/<name>) so counts do
// not depend on how ramjet rewrites the query string.
func (o *origin) Requests(path string) int {
	f, err := os.Open(filepath.Join(o.dir, "access.log"))
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// Format "counts": $request_method $request_uri $status
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		p, _, _ := strings.Cut(fields[1], "?")
		if p == path {
			n++
		}
	}
	return n
}

// waitRequests polls Requests(path) until it reaches atLeast (nginx writes
// the log line just after the response) and returns the count then.
func (o *origin) waitRequests(path string, atLeast int) int {
	n := 0
	pollUntil(2*time.Second, func() bool {
		n = o.Requests(path)
		return n >= atLeast
	})
	return n
}

// marked reports whether echo.php has seen a request with mark=name.
func (o *origin) marked(name string) bool {
	_, err := os.Stat(filepath.Join(o.markDir, name))
	return err == nil
}

func fpmConfig(dir string, port int) string {
	return fmt.Sprintf(`[global]
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
php_admin_flag[expose_php] = off
php_admin_value[post_max_size] = 512M
php_admin_value[upload_max_filesize] = 512M
php_admin_value[memory_limit] = 256M
php_admin_value[max_execution_time] = 60
php_admin_value[upload_tmp_dir] = %[1]s/tmp
`, dir, port)
}

func nginxConfig(dir string, port, fpmPort int) string {
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
user root root;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log warn;

events {
	worker_connections 1024;
}

http {
	types {
		text/html html;
		text/plain txt;
		application/octet-stream bin;
	}
	default_type application/octet-stream;
	log_format counts '$request_method $request_uri $status';
	access_log %[1]s/access.log counts;
	client_body_temp_path %[1]s/tmp/body;
	proxy_temp_path %[1]s/tmp/proxy;
	fastcgi_temp_path %[1]s/tmp/fastcgi;
	uwsgi_temp_path %[1]s/tmp/uwsgi;
	scgi_temp_path %[1]s/tmp/scgi;
	client_max_body_size 512m;
	sendfile on;
	keepalive_requests 100000;
	server_tokens off;
	large_client_header_buffers 4 64k;

	server {
		listen %[2]s:%[3]d;
		server_name _;
		root %[4]s;

		# Generated static files, cacheable for five minutes.
		location /static/ {
			add_header Cache-Control "public, max-age=300";
		}
		# Large files without any freshness information.
		location /stream/ {
		}
		# /e/<name> runs echo.php: every test uses its own paths.
		location /e/ {
			fastcgi_pass 127.0.0.1:%[5]d;
			fastcgi_param SCRIPT_FILENAME %[4]s/echo.php;
			include %[1]s/fastcgi.params;
		}
		location = /upload {
			fastcgi_pass 127.0.0.1:%[5]d;
			fastcgi_param SCRIPT_FILENAME %[4]s/upload.php;
			include %[1]s/fastcgi.params;
		}
		location ~ \.php$ {
			fastcgi_pass 127.0.0.1:%[5]d;
			fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
			include %[1]s/fastcgi.params;
		}
	}
}
`, dir, "127.0.0.1", port, docroot, fpmPort)
}

// fastCGIParams is the fastcgi.params file included by nginxConfig.
func fastCGIParams(dir string) string {
	return `fastcgi_param QUERY_STRING $query_string;
fastcgi_param REQUEST_METHOD $request_method;
fastcgi_param CONTENT_TYPE $content_type;
fastcgi_param CONTENT_LENGTH $content_length;
fastcgi_param SCRIPT_NAME $fastcgi_script_name;
fastcgi_param REQUEST_URI $request_uri;
fastcgi_param DOCUMENT_URI $document_uri;
fastcgi_param DOCUMENT_ROOT $document_root;
fastcgi_param SERVER_PROTOCOL $server_protocol;
fastcgi_param REQUEST_SCHEME $scheme;
fastcgi_param GATEWAY_INTERFACE CGI/1.1;
fastcgi_param SERVER_SOFTWARE nginx;
fastcgi_param REMOTE_ADDR $remote_addr;
fastcgi_param REMOTE_PORT $remote_port;
fastcgi_param SERVER_ADDR $server_addr;
fastcgi_param SERVER_PORT $server_port;
fastcgi_param SERVER_NAME $server_name;
fastcgi_param REDIRECT_STATUS 200;
fastcgi_param RAMJET_MARK_DIR ` + filepath.Join(dir, "marks") + `;
fastcgi_read_timeout 120s;
`
}

// ---------------------------------------------------------------------------
// ramjet

type ramjet struct {
	URL      string // http://127.0.0.1:port of the proxy listener
	Addr     string
	AdminURL string
	p        *proc
}

// startRamjet runs `ramjet serve` on ephemeral loopback ports in front of
// originURL (omitted when empty) with extra args appended, and waits for
// /healthz. At cleanup it sends SIGTERM and fails the test unless ramjet
// exits with status 0 within stopTimeout. Its output is logged if the test
// failed.
func startRamjet(t testing.TB, originURL string, args ...string) *ramjet {
	t.Helper()
	if ramjetBin == "" {
		t.Fatalf("ramjet binary not built:\n%s", buildOutput)
	}
	var last string
	for attempt := 0; attempt < 5; attempt++ {
		rj := &ramjet{}
		ports := freePorts(t, 2)
		listen, admin := ports[0], ports[1]
		rj.Addr = fmt.Sprintf("127.0.0.1:%d", listen)
		rj.URL = "http://" + rj.Addr
		rj.AdminURL = fmt.Sprintf("http://127.0.0.1:%d", admin)
		argv := []string{"serve", "--listen", rj.Addr, "--admin", strings.TrimPrefix(rj.AdminURL, "http://")}
		if originURL != "" {
			argv = append(argv, "--origin", originURL)
		}
		argv = append(argv, args...)
		p, err := startProc(ramjetBin, argv, "")
		if err != nil {
			t.Fatal(err)
		}
		rj.p = p
		c := &http.Client{Timeout: time.Second}
		ok := pollUntil(startTimeout, func() bool {
			if p.exited() {
				return true
			}
			resp, err := c.Get(rj.AdminURL + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		c.CloseIdleConnections()
		if ok && !p.exited() {
			t.Cleanup(func() { rj.cleanup(t) })
			return rj
		}
		p.stop(syscall.SIGKILL)
		last = fmt.Sprintf("ramjet %s did not become healthy (exited=%v):\n%s", strings.Join(argv, " "), p.exited(), p.out)
		if !addrInUse(p.out.String()) {
			break
		}
	}
	t.Fatal(last)
	return nil
}

func (rj *ramjet) cleanup(t testing.TB) {
	if !rj.p.exited() {
		if !rj.p.stop(syscall.SIGTERM) {
			t.Errorf("ramjet did not exit within %v of SIGTERM", stopTimeout)
		}
		if code := rj.p.exitCode(); code != 0 {
			t.Errorf("ramjet exited with status %d after SIGTERM, want 0", code)
		}
	}
	if t.Failed() {
		t.Logf("ramjet output:\n%s", rj.Output())
	}
}

// Signal sends sig to the ramjet process.
func (rj *ramjet) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := rj.p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// Wait waits up to d for ramjet to exit and returns its exit code, or fails.
func (rj *ramjet) Wait(t testing.TB, d time.Duration) int {
	t.Helper()
	if !rj.p.wait(d) {
		t.Fatalf("ramjet still running after %v", d)
	}
	return rj.p.exitCode()
}

// Output returns everything ramjet wrote to stdout and stderr so far.
func (rj *ramjet) Output() string { return rj.p.out.String() }

// Pid returns the process id.
func (rj *ramjet) Pid() int { return rj.p.cmd.Process.Pid }

// Alive reports whether the process is still running.
func (rj *ramjet) Alive() bool { return !rj.p.exited() }

// runRamjet runs the binary to completion (at most d) and returns its exit
// code and combined output.
func runRamjet(t testing.TB, d time.Duration, args ...string) (int, string) {
	t.Helper()
	if ramjetBin == "" {
		t.Fatalf("ramjet binary not built:\n%s", buildOutput)
	}
	p, err := startProc(ramjetBin, args, "")
	if err != nil {
		t.Fatal(err)
	}
	if !p.wait(d) {
		p.stop(syscall.SIGKILL)
		t.Fatalf("ramjet %s still running after %v; output:\n%s", strings.Join(args, " "), d, p.out)
	}
	return p.exitCode(), p.out.String()
}

// rssBytes reads VmRSS of pid from /proc.
func rssBytes(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmRSS line")
}

// rssSampler records the peak RSS of a process every 10 ms until stopped.
type rssSampler struct {
	pid  int
	peak int64
	stop chan struct{}
	done chan struct{}
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := rssBytes(pid); err == nil && n > s.peak {
				s.peak = n
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Peak stops sampling and returns the highest RSS seen.
func (s *rssSampler) Peak() int64 {
	close(s.stop)
	<-s.done
	return s.peak
}

// writeConfig writes a ramjet YAML config into dir (a fresh temp dir when
// empty) and returns its path. It replaces an existing file by rename, as
// editors do, so a watcher never sees a half-written file.
func writeConfig(t testing.TB, dir, yaml string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "ramjet.yaml")
	tmp, err := os.CreateTemp(dir, ".ramjet.yaml.*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.WriteString(yaml); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
	return path
}

var _ io.Writer = (*syncBuffer)(nil)
