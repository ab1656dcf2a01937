// End-to-end harness: each test starts its own real origin (nginx, or
// Apache in e2e_apache_test.go, with php-fpm serving testdata/www on
// ephemeral loopback ports) and its own ramjet in front of it, through
// internal/testbed, and talks to both over plain HTTP. This file holds what is particular to these tests: the
// docroot, copied into a temporary directory with its large files
// generated there (nothing is written into the repository), the origin's
// nginx and php-fpm configuration, and echo.php's marks.
//
// The tests live in package main_test so that no identifier here can collide
// with the command's own package main.
package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const (
	nginxBin  = "/usr/sbin/nginx"
	phpFPMBin = "/usr/sbin/php-fpm8.2"

	startTimeout = 10 * time.Second // a process must answer within this
	stopTimeout  = 10 * time.Second // a process must exit within this after SIGTERM

	size2MiB   = 2 << 20
	size300MiB = 300 << 20
)

// docroot is a copy of testdata/www plus generated files; set once by
// TestMain.
var docroot string

// TestMain prepares the shared docroot; testbed builds the binary on
// first use (a failed build fails every test that needs it, with the
// compiler output) and removes it at the end.
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
	// Apache's children read the docroot as www-data when the tests run
	// as root (Apache will not serve as root).
	if err := os.Chmod(tmp, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	docroot = filepath.Join(tmp, "www")
	if err := prepareDocroot(docroot); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: docroot:", err)
		return 1
	}
	return testbed.Main(m)
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
// Origin: nginx + php-fpm

// origin is a web server, nginx (startOrigin) or Apache
// (startApacheOrigin), in front of php-fpm serving the docroot.
type origin struct {
	URL     string // http://127.0.0.1:port
	Addr    string // 127.0.0.1:port
	markDir string // where echo.php notes mark=NAME
	web     webServer
	fpm     *testbed.PHPFPM
}

// webServer is what the tests use of the origin's web server: testbed's
// Nginx and Apache, each with the access log it reads.
type webServer interface {
	Requests(path string) int
	WaitRequests(t testing.TB, path string, atLeast int) int
	SyncLog(t testing.TB)
	Stop()
}

// startOrigin starts php-fpm and nginx and waits until both answer. Both
// are stopped when the test ends.
func startOrigin(t testing.TB) *origin {
	t.Helper()
	return startOriginWith(t, "", "")
}

// startOriginWith is startOrigin with extra nginx directives for the http
// block (gzip, …) and the server block (more locations).
func startOriginWith(t testing.TB, httpExtra, serverExtra string) *origin {
	t.Helper()
	o, dir := startPHPOrigin(t)
	params := filepath.Join(dir, "fastcgi.params")
	if err := os.WriteFile(params, []byte(fastCGIParams(o.markDir)), 0o644); err != nil {
		t.Fatal(err)
	}
	n := testbed.StartNginx(t, testbed.NginxConfig{HTTP: nginxHTTP + httpExtra, Server: nginxServer(o.fpm.Addr, params) + serverExtra})
	o.web, o.URL, o.Addr = n, n.URL, n.Addr
	o.waitReady(t)
	return o
}

// startPHPOrigin starts the origin's php-fpm and returns the origin
// without its web server, and the directory for the web server's files.
func startPHPOrigin(t testing.TB) (*origin, string) {
	t.Helper()
	dir := t.TempDir()
	o := &origin{markDir: filepath.Join(dir, "marks")}
	for _, d := range []string{o.markDir, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o.fpm = testbed.StartPHPFPM(t, fpmPool(filepath.Join(dir, "tmp")))
	return o, dir
}

// waitReady waits until the web server serves a static file and echo.php.
func (o *origin) waitReady(t testing.TB) {
	t.Helper()
	c := &http.Client{Timeout: time.Second}
	defer c.CloseIdleConnections()
	status := ""
	ok := testbed.Poll(20*time.Second, func() bool {
		for _, path := range []string{"/static/page725.html", "/e/__ready"} {
			resp, err := c.Get(o.URL + path)
			if err != nil {
				status = err.Error()
				return false
			}
			resp.Body.Close()
			if status = resp.Status; resp.StatusCode != http.StatusOK {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("origin not serving the docroot within 20 s: %s", status)
	}
}

// Stop stops the web server and php-fpm (to simulate an origin that is
// down). It is idempotent and also runs at test cleanup.
func (o *origin) Stop() {
	o.web.Stop()
	o.fpm.Stop()
}

// Requests counts the web server's requests for path (without the
// query). Test pages use unique paths (/e/<name>) so counts do not depend
// on how ramjet rewrites the query string.
func (o *origin) Requests(path string) int { return o.web.Requests(path) }

// waitRequests waits until Requests(path) reaches atLeast (the server
// writes the log line just after the response) and returns the count once
// every request it had answered is logged (testbed's WaitRequests).
func (o *origin) waitRequests(t testing.TB, path string, atLeast int) int {
	t.Helper()
	return o.web.WaitRequests(t, path, atLeast)
}

// loggedRequests is Requests(path) once every request the server had
// answered is in its log (testbed's SyncLog): a count that misses
// nothing, for a baseline or an assertion that no request came.
func (o *origin) loggedRequests(t testing.TB, path string) int {
	t.Helper()
	o.web.SyncLog(t)
	return o.Requests(path)
}

// marked reports whether echo.php has seen a request with mark=name.
func (o *origin) marked(name string) bool {
	_, err := os.Stat(filepath.Join(o.markDir, name))
	return err == nil
}

// fpmPool is the origin's php-fpm pool settings beyond testbed's.
func fpmPool(tmp string) string {
	return `php_admin_flag[expose_php] = off
php_admin_value[post_max_size] = 512M
php_admin_value[upload_max_filesize] = 512M
php_admin_value[memory_limit] = 256M
php_admin_value[max_execution_time] = 60
php_admin_value[upload_tmp_dir] = ` + tmp + "\n"
}

// nginxHTTP is the origin's http-level settings.
const nginxHTTP = `	types {
		text/html html;
		text/plain txt;
		application/octet-stream bin;
	}
	client_max_body_size 512m;
	sendfile on;
	keepalive_requests 100000;
	large_client_header_buffers 4 64k;
`

// nginxServer is the origin's server block: the docroot, echo.php under
// /e/, upload.php and any other script through php-fpm at fpm.
func nginxServer(fpm, params string) string {
	return fmt.Sprintf(`		root %[1]s;

		# Generated static files, cacheable for five minutes.
		location /static/ {
			add_header Cache-Control "public, max-age=300";
		}
		# Large files without any freshness information.
		location /stream/ {
		}
		# /e/<name> runs echo.php: every test uses its own paths.
		location /e/ {
			fastcgi_pass %[2]s;
			fastcgi_param SCRIPT_FILENAME %[1]s/echo.php;
			include %[3]s;
		}
		location = /upload {
			fastcgi_pass %[2]s;
			fastcgi_param SCRIPT_FILENAME %[1]s/upload.php;
			include %[3]s;
		}
		location ~ \.php$ {
			fastcgi_pass %[2]s;
			fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
			include %[3]s;
		}
`, docroot, fpm, params)
}

// fastCGIParams is the fastcgi.params file the origin's locations include.
func fastCGIParams(markDir string) string {
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
fastcgi_param RAMJET_MARK_DIR ` + markDir + `;
fastcgi_read_timeout 120s;
`
}

// ---------------------------------------------------------------------------
// ramjet

// startRamjet runs ramjet (testbed.StartRamjet) in front of originURL
// (none when empty) with extra args appended.
func startRamjet(t testing.TB, originURL string, args ...string) *testbed.Ramjet {
	t.Helper()
	if originURL != "" {
		args = append([]string{"--origin", originURL}, args...)
	}
	return testbed.StartRamjet(t, args...)
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
			if n, err := testbed.RSS(pid); err == nil && n > s.peak {
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
