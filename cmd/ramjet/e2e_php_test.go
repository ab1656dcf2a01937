package main_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestPHPDocrootServesScripts(t *testing.T) {
	rj, _ := startPHP(t, "workers: 2\nenv: [\"RAMJET_TEST=from-config\"]\nini: [\"memory_limit=77M\"]")
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		name, path string
		status     int
		contains   []string
		header     map[string]string
	}{
		{name: "hello world", path: "/hello.php", status: 200, contains: []string{"Hello, World!"}},
		{name: "phpinfo", path: "/info.php", status: 200, contains: []string{"PHP Version", "cgi-fcgi"}},
		{name: "query string reaches the front controller", path: "/2024/05/a-post/?p=7&x=y", status: 200,
			contains: []string{"front: /2024/05/a-post/?p=7&x=y", "script: /index.php", "query: p=7&x=y"}},
		{name: "header and status from php", path: "/headers.php", status: 418, contains: []string{"teapot"},
			header: map[string]string{"X-Custom": "yes", "Set-Cookie": "flavour=oat; Path=/"}},
		{name: "location from php is a 302", path: "/redirect.php", status: 302, header: map[string]string{"Location": "/hello.php"}},
		{name: "path info", path: "/pathinfo.php/a/b", status: 200, contains: []string{"path_info: /a/b", "script: /pathinfo.php"}},
		{name: "exit mid-script ends the response normally", path: "/exit.php", status: 200, contains: []string{"before exit"}},
		{name: "per-pool env and ini", path: "/env.php", status: 200, contains: []string{"env: from-config", "memory_limit: 77M", "remote: 127.0.0.1"}},
		{name: "static file from the docroot", path: "/static/style.css", status: 200, contains: []string{"color: red"},
			header: map[string]string{"Content-Type": "text/css; charset=utf-8", "Accept-Ranges": "bytes"}},
		{name: "directory index", path: "/blog/", status: 200, contains: []string{"blog index"}},
		{name: "directory without slash redirects", path: "/blog", status: 301, header: map[string]string{"Location": "/blog/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, c, rj.URL+tt.path)
			mustStatus(t, r, tt.status, tt.path)
			for _, s := range tt.contains {
				if !bytes.Contains(r.Body, []byte(s)) {
					t.Errorf("body lacks %q: %.400q", s, r.Body)
				}
			}
			for k, v := range tt.header {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	if os.Geteuid() == 0 {
		r := get(t, c, rj.URL+"/env.php")
		if bytes.Contains(r.Body, []byte("uid: 0\n")) {
			t.Fatalf("PHP runs as root:\n%s", r.Body)
		}
	}
}

func TestPHPPostFormAndMultipartUpload(t *testing.T) {
	rj, _ := startPHP(t, "")
	c := &http.Client{Timeout: 20 * time.Second}
	r, err := tryDo(c, "POST", rj.URL+"/form.php", strings.NewReader("name=ramjet&lang=go"), "Content-Type: application/x-www-form-urlencoded")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, 200, "form post")
	for _, want := range []string{"post.name: ramjet", "post.lang: go", "method: POST"} {
		if !bytes.Contains(r.Body, []byte(want)) {
			t.Fatalf("form post: body lacks %q:\n%s", want, r.Body)
		}
	}
	file := bytes.Repeat([]byte("upload-bytes-"), 80000) // ~1 MB
	sum := sha256.Sum256(file)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("title", "holiday")
	fw, _ := mw.CreateFormFile("photo", "beach.jpg")
	fw.Write(file)
	mw.Close()
	// Chunked on purpose: PHP needs CONTENT_LENGTH, so ramjet must count it.
	r, err = tryDo(c, "POST", rj.URL+"/form.php", io.MultiReader(&body), "Content-Type: "+mw.FormDataContentType())
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, 200, "multipart upload")
	want := fmt.Sprintf("file.photo: beach.jpg %d %s err=0", len(file), hex.EncodeToString(sum[:]))
	if !bytes.Contains(r.Body, []byte(want)) || !bytes.Contains(r.Body, []byte("post.title: holiday")) {
		t.Fatalf("upload: want %q in:\n%s", want, r.Body)
	}
}

func TestPHPLargeOutputStreams(t *testing.T) {
	rj, _ := startPHP(t, "")
	const n = 20 << 20
	resp, err := http.Get(fmt.Sprintf("%s/big.php?n=%d", rj.URL, n))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.Copy(io.Discard, resp.Body)
	if err != nil || got != n || resp.StatusCode != 200 {
		t.Fatalf("status %d, read %d bytes (err %v), want %d", resp.StatusCode, got, err, n)
	}
	if cl := resp.Header.Get("Content-Length"); cl != "" {
		t.Fatalf("a 20 MB script output was buffered to learn its length (Content-Length %s)", cl)
	}
}

func TestPHPSecurity(t *testing.T) {
	rj, _ := startPHP(t, "")
	tests := []struct {
		name, rawPath string
		status        int
	}{
		// The server cleans ".." against the root first ("/../x" is "/x"),
		// so these ask for a file the docroot does not have.
		{"dot-dot traversal", "/../secret.php", 404},
		{"encoded traversal", "/%2e%2e/secret.php", 404},
		{"traversal from a subdirectory", "/uploads/../../secret.php", 404},
		{"symlink escaping the docroot", "/link.php", 403},
		{"image with php suffix is not executed", "/uploads/evil.jpg/x.php", 404},
		{"dotfile", "/.env", 403},
		{"dotfile under a directory", "/uploads/.htaccess", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := rawGet(t, rj.Addr, tt.rawPath)
			if strings.Contains(body, "OUTSIDE") || strings.Contains(body, "EXECUTED") || strings.Contains(body, "do-not-serve") {
				t.Fatalf("%s leaked: %d %q", tt.rawPath, status, body)
			}
			if status != tt.status {
				t.Fatalf("%s: status %d, want %d", tt.rawPath, status, tt.status)
			}
		})
	}
	c := &http.Client{Timeout: 10 * time.Second}
	r := get(t, c, rj.URL+"/uploads/evil.jpg")
	if r.Status != 200 || string(r.Body) != "<?php echo 'EXECUTED';\n" {
		t.Fatalf("an upload is served as a file, never run: %d %q", r.Status, r.Body)
	}
}

// rawGet sends a request line as given (no client-side path cleaning).
func rawGet(t testing.TB, addr, path string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPHPCrashAndTimeout(t *testing.T) {
	rj, _ := startPHP(t, "workers: 2\nrequest_timeout: 1s")
	c := &http.Client{Timeout: 20 * time.Second}
	r := get(t, c, rj.URL+"/crash.php")
	mustStatus(t, r, 502, "worker killed mid-request")
	mustStatus(t, get(t, c, rj.URL+"/hello.php"), 200, "after a crash")
	start := time.Now()
	r = get(t, c, rj.URL+"/loop.php")
	mustStatus(t, r, 504, "infinite loop")
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("timeout answered after %v", took)
	}
	mustStatus(t, get(t, c, rj.URL+"/hello.php"), 200, "after a timeout")
	// The looping worker was killed, not left burning CPU.
	ok := testbed.Poll(5*time.Second, func() bool {
		for _, w := range phpWorkers(t, rj) {
			if testbed.ProcState(w.PID) == "R" {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("a worker still runs after the timeout: %+v", phpWorkers(t, rj))
	}
}

func TestPHPIdleSuspendAndResume(t *testing.T) {
	rj, _ := startPHP(t, "workers: 2\nmin_workers: 1\nidle_suspend: 200ms")
	c := &http.Client{Timeout: 10 * time.Second}
	mustStatus(t, get(t, c, rj.URL+"/hello.php"), 200, "warm up")
	var pid int
	ok := testbed.Poll(5*time.Second, func() bool {
		for _, w := range phpWorkers(t, rj) {
			if w.State == "suspended" && testbed.ProcState(w.PID) == "T" {
				pid = w.PID
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no worker suspended (state T) after idling: %+v", phpWorkers(t, rj))
	}
	r := get(t, c, rj.URL+"/sleep.php")
	mustStatus(t, r, 200, "request to a suspended pool")
	if !bytes.Contains(r.Body, []byte(fmt.Sprint("slept ", pid))) {
		t.Fatalf("the suspended worker %d was not the one resumed: %q", pid, r.Body)
	}
}

func TestPHPRecycleUnderLoadLosesNothing(t *testing.T) {
	rj, _ := startPHP(t, "workers: 3\nmax_requests: 5")
	failures := load(t, rj.URL+"/sleep.php?ms=2", 4, 200, 30*time.Second)
	if failures != 0 {
		t.Fatalf("%d requests failed while workers were recycled", failures)
	}
	for _, w := range phpWorkers(t, rj) {
		if w.Requests > 5 {
			t.Fatalf("worker %d served %d requests, max 5", w.PID, w.Requests)
		}
	}
}

func TestPHPBusyPoolAnswers503(t *testing.T) {
	rj, _ := startPHP(t, "workers: 1\nqueue_wait: 200ms")
	c := &http.Client{Timeout: 10 * time.Second}
	done := make(chan result, 1)
	go func() {
		r, _ := tryDo(c, "GET", rj.URL+"/sleep.php?ms=1500", nil)
		done <- r
	}()
	if !testbed.Poll(5*time.Second, func() bool {
		ws := phpWorkers(t, rj)
		return len(ws) == 1 && ws[0].State == "busy"
	}) {
		t.Fatalf("the one worker is not busy with the long request: %+v", phpWorkers(t, rj))
	}
	r := get(t, c, rj.URL+"/hello.php")
	mustStatus(t, r, 503, "every worker busy")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	if r := <-done; r.Status != 200 {
		t.Fatalf("the long request: %d", r.Status)
	}
}

func TestPHPPoolReloadUnderLoad(t *testing.T) {
	root := phpDocroot(t)
	path := phpConfig(t, root, "workers: 2")
	rj := startRamjet(t, "", "--config", path)
	before := map[int]bool{}
	mustStatus(t, get(t, &http.Client{Timeout: 5 * time.Second}, rj.URL+"/hello.php"), 200, "warm up")
	for _, w := range phpWorkers(t, rj) {
		before[w.PID] = true
	}
	var failures atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { failures.Add(int64(loadUntil(rj.URL+"/sleep.php?ms=20", 4, stop))) })
	waitServed(t, rj, nil, phpServed(phpWorkers(t, rj), nil)+8) // the load runs
	testbed.WriteConfig(t, strings.TrimSuffix(path, "/ramjet.yaml"), strings.Replace(mustRead(t, path), "workers: 2", "workers: 3", 1))
	rj.Signal(t, syscall.SIGHUP)
	ok := testbed.Poll(10*time.Second, func() bool {
		ws := phpWorkers(t, rj)
		for _, w := range ws {
			if before[w.PID] {
				return false
			}
		}
		return len(ws) > 0
	})
	if ok { // the load reaches the new workers before it stops
		waitServed(t, rj, func(pid int) bool { return !before[pid] }, 8)
	}
	close(stop)
	wg.Wait()
	if !ok {
		t.Fatalf("old workers still serve after reload: %+v", phpWorkers(t, rj))
	}
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d requests failed across the pool reload", n)
	}
}

// phpServed sums the requests of the workers that keep says to count
// (nil: all).
func phpServed(ws []phpWorker, keep func(pid int) bool) int {
	n := 0
	for _, w := range ws {
		if keep == nil || keep(w.PID) {
			n += w.Requests
		}
	}
	return n
}

// waitServed waits until the workers keep counts (nil: all) have served
// at least n requests, as /php/status tells.
func waitServed(t testing.TB, rj *testbed.Ramjet, keep func(pid int) bool, n int) {
	t.Helper()
	if !testbed.Poll(10*time.Second, func() bool { return phpServed(phpWorkers(t, rj), keep) >= n }) {
		t.Fatalf("workers served %d requests within 10 s, want %d: %+v", phpServed(phpWorkers(t, rj), keep), n, phpWorkers(t, rj))
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// load sends total GETs over conc connections (bounded by d) and returns
// how many did not answer 200.
func load(t testing.TB, url string, conc, total int, d time.Duration) int {
	t.Helper()
	var next, failed atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			c := &http.Client{Timeout: 10 * time.Second}
			for next.Add(1) <= int64(total) && time.Now().Before(deadline) {
				if r, err := tryDo(c, "GET", url, nil); err != nil || r.Status != 200 {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := next.Load(); n < int64(total) {
		t.Fatalf("only %d of %d requests sent within %v", n, total, d)
	}
	return int(failed.Load())
}

// loadUntil sends GETs over conc connections until stop (at most 60 s)
// and returns how many did not answer 200.
func loadUntil(url string, conc int, stop <-chan struct{}) int {
	var failed atomic.Int64
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			c := &http.Client{Timeout: 10 * time.Second}
			for time.Now().Before(deadline) {
				select {
				case <-stop:
					return
				default:
				}
				if r, err := tryDo(c, "GET", url, nil); err != nil || r.Status != 200 {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(failed.Load())
}

// PHP sees the connection as nginx's fastcgi_params would show it: the
// client's own port and the address it connected to, whatever headers the
// client sent under the names ramjet uses to carry them.
func TestPHPSeesTheClientPortAndServerAddress(t *testing.T) {
	rj, _ := startPHP(t, "")
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(rj.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET /env.php HTTP/1.1\r\nHost: localhost\r\nX-Ramjet-Remote-Port: 1\r\nX-Ramjet-Server-Addr: 203.0.113.9\r\nConnection: close\r\n\r\n")
	resp, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	port := conn.LocalAddr().(*net.TCPAddr).Port
	for _, want := range []string{fmt.Sprintf("remote_port: %d\n", port), "server_addr: 127.0.0.1\n", "remote: 127.0.0.1\n"} {
		if !bytes.Contains(resp, []byte(want)) {
			t.Errorf("response lacks %q:\n%s", want, resp)
		}
	}
}

// Workers start with ramjet; php-cgi drops a connection that carries no
// request for 5 s. The first requests after a quiet start must not fail:
// the separate engine redials, the shared one keeps the connection with a
// first request when it claims a worker.
func TestPHPFirstRequestsAfterAQuietStartSucceed(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"shared", "separate"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			rj, _ := startPHP(t, "workers: 2\nengine: "+engine)
			if engine == "separate" {
				waitWorkersDropped(t, rj)
			} else {
				waitWorkersKept(t, rj)
			}
			c := &http.Client{Timeout: 10 * time.Second}
			for i := range 4 {
				mustStatus(t, get(t, c, rj.URL+"/hello.php"), 200, fmt.Sprintf("request %d after a quiet start", i+1))
			}
			resp, err := http.Get(rj.AdminURL + "/php/status")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if !bytes.Contains(body, []byte(`"crashes": 0`)) && !bytes.Contains(body, []byte(`"crashes":0`)) {
				t.Fatalf("workers counted as crashed after a quiet start:\n%s", body)
			}
		})
	}
}

// waitWorkersKept waits until every worker is older than php-cgi's 5 s
// (its timer, in real time) and checks that each still holds ramjet's
// connection besides the master's listening socket.
func waitWorkersKept(t testing.TB, rj *testbed.Ramjet) {
	t.Helper()
	old := func() bool {
		ws := phpWorkers(t, rj)
		for _, w := range ws {
			if w.AgeSeconds < 5.5 {
				return false
			}
		}
		return len(ws) > 0
	}
	if !testbed.Poll(15*time.Second, old) {
		t.Fatalf("workers not 5.5 s old after 15 s: %+v", phpWorkers(t, rj))
	}
	for _, w := range phpWorkers(t, rj) {
		if n, err := testbed.SocketCount(w.PID); err != nil || n != 2 {
			t.Fatalf("worker %d holds %d sockets (%v), want the listening one and ramjet's connection", w.PID, n, err)
		}
	}
}

// waitWorkersDropped waits until every php-cgi worker has dropped ramjet's
// connection for want of a first request (it then holds only its
// listening socket). This waits out php-cgi's own 5 s in real time, its
// timer, not ramjet's, but no longer.
func waitWorkersDropped(t testing.TB, rj *testbed.Ramjet) {
	t.Helper()
	dropped := func() bool {
		ws := phpWorkers(t, rj)
		for _, w := range ws {
			if n, err := testbed.SocketCount(w.PID); err != nil || n != 1 {
				return false
			}
		}
		return len(ws) > 0
	}
	if !testbed.Poll(15*time.Second, dropped) {
		t.Fatalf("php-cgi workers still hold ramjet's connection after 15 s: %+v", phpWorkers(t, rj))
	}
}

// TestPHPHonoursINIFileAndUserINI gives the pool a php.ini of its own
// (ini_file) and a directory a .user.ini: PHP reads both, the .user.ini
// winning below its directory as under php-fpm, and the .user.ini itself
// is never served.
func TestPHPHonoursINIFileAndUserINI(t *testing.T) {
	root := phpDocroot(t)
	ini := filepath.Join(testbed.PublicDir(t), "php.ini")
	// 0644: PHP runs as www-data when the tests run as root.
	for path, body := range map[string]string{
		ini:                                      "memory_limit = 55M\n",
		filepath.Join(root, "blog", ".user.ini"): "memory_limit = 66M\n",
		filepath.Join(root, "blog", "limit.php"): "<?php echo 'memory_limit: ', ini_get('memory_limit');",
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rj := startRamjet(t, "", "--config", phpConfig(t, root, "workers: 1\nini_file: "+ini))
	c := &http.Client{Timeout: 10 * time.Second}
	if r := get(t, c, rj.URL+"/env.php"); !bytes.Contains(r.Body, []byte("memory_limit: 55M\n")) {
		t.Fatalf("ini_file not used:\n%s", r.Body)
	}
	if r := get(t, c, rj.URL+"/blog/limit.php"); string(r.Body) != "memory_limit: 66M" {
		t.Fatalf(".user.ini not honoured: %q", r.Body)
	}
	mustStatus(t, get(t, c, rj.URL+"/blog/.user.ini"), 403, ".user.ini over HTTP")
}

// TestPHPStatusReportsTheMasterAndMemory: /php/status names the shared
// engine's master and the children no worker holds, and the pool's PSS,
// which /metrics has too.
func TestPHPStatusReportsTheMasterAndMemory(t *testing.T) {
	rj, _ := startPHP(t, "workers: 3\nmin_workers: 1")
	resp, err := http.Get(rj.AdminURL + "/php/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Pools []struct {
			MasterPID int         `json:"master_pid"`
			Spares    []int       `json:"spares"`
			PSSBytes  int64       `json:"pss_bytes"`
			Workers   []phpWorker `json:"workers"`
		} `json:"pools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Pools) != 1 {
		t.Fatalf("pools %+v", st.Pools)
	}
	p := st.Pools[0]
	if p.MasterPID == 0 || len(p.Spares) != 2 || len(p.Workers) != 1 || p.PSSBytes <= 0 {
		t.Fatalf("status %+v: want a master, 2 spares, 1 worker and the PSS", p)
	}
	if s := testbed.ProcState(p.MasterPID); s == "" {
		t.Fatalf("master %d does not exist", p.MasterPID)
	}
	m, err := http.Get(rj.AdminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Body.Close()
	body, _ := io.ReadAll(m.Body)
	if !bytes.Contains(body, []byte("ramjet_php_pss_bytes{pool=")) {
		t.Fatal("/metrics lacks ramjet_php_pss_bytes")
	}
}

// TestPHPClientThatLeavesWhileQueuedDoesNotRunTheScript: with the one
// worker busy, a request waits; its client closes the connection. When
// the worker frees, the script is not run (it would leave a file), and
// the next request's is. Both kinds of uncached request are checked: a
// POST, and a GET with a cookie that bypasses the cache.
func TestPHPClientThatLeavesWhileQueuedDoesNotRunTheScript(t *testing.T) {
	root := phpDocroot(t)
	marks := filepath.Join(testbed.PublicDir(t), "marks")
	if err := os.Mkdir(marks, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(marks, 0o777); err != nil { // PHP runs as www-data under root; umask
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "mark.php"), []byte(`<?php file_put_contents('`+marks+`/' . basename($_GET['id']), 'ran'); echo 'marked';`), 0o644); err != nil {
		t.Fatal(err)
	}
	rj := startRamjet(t, "", "--config", phpConfig(t, root, "workers: 1\nmin_workers: 1"))
	addr := strings.TrimPrefix(rj.URL, "http://")
	c := &http.Client{Timeout: 10 * time.Second}
	for i, req := range []string{
		"POST /mark.php?id=%s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
		"GET /mark.php?id=%s HTTP/1.1\r\nHost: x\r\nCookie: wordpress_logged_in_x=1\r\n\r\n",
	} {
		left := fmt.Sprintf("left%d", i)
		busy := make(chan result, 1)
		go func() {
			r, _ := tryDo(c, "GET", rj.URL+"/sleep.php?ms=1000", nil)
			busy <- r
		}()
		if !testbed.Poll(5*time.Second, func() bool { ws := phpWorkers(t, rj); return len(ws) == 1 && ws[0].State == "busy" }) {
			t.Fatalf("the worker is not busy: %+v", phpWorkers(t, rj))
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(conn, req, left); err != nil {
			t.Fatal(err)
		}
		if !testbed.Poll(5*time.Second, func() bool { return phpQueued(t, rj) == 1 }) {
			t.Fatal("the request did not queue for the busy worker")
		}
		conn.Close()
		if r := <-busy; r.Status != 200 {
			t.Fatalf("the long request: %d", r.Status)
		}
		stayed := fmt.Sprintf("stayed%d", i)
		mustStatus(t, get(t, c, rj.URL+"/mark.php?id="+stayed, "Cookie: wordpress_logged_in_x=1"), 200, "the next request")
		if _, err := os.Stat(filepath.Join(marks, stayed)); err != nil {
			t.Fatalf("the next request's script did not run: %v", err)
		}
		if _, err := os.Stat(filepath.Join(marks, left)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the script of a request whose client left while queued ran (%v)", err)
		}
	}
}

// phpQueued is how many requests wait for a worker of the default pool.
func phpQueued(t testing.TB, rj *testbed.Ramjet) int {
	t.Helper()
	resp, err := http.Get(rj.AdminURL + "/php/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Pools []struct {
			Queued int `json:"queued"`
		} `json:"pools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || len(st.Pools) != 1 {
		t.Fatalf("status: %+v, %v", st, err)
	}
	return st.Pools[0].Queued
}

// TestPHPHeadStatesTheLengthOfTheGetOrNone: a HEAD answered by a fill
// (PHP runs a GET) carries the GET's length; a HEAD that reaches PHP
// (bypassed), whose script sends no body, carries the length the script
// declared or none, never 0, and the connection stays open.
func TestPHPHeadStatesTheLengthOfTheGetOrNone(t *testing.T) {
	rj, _ := startPHP(t, "workers: 2")
	rc := dialRaw(t, rj.Addr)
	head := func(path, cookie string) *http.Response {
		t.Helper()
		req := "HEAD " + path + " HTTP/1.1\r\nHost: php.test\r\n"
		if cookie != "" {
			req += "Cookie: " + cookie + "\r\n"
		}
		if _, err := io.WriteString(rc.c, req+"\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(rc.br, &http.Request{Method: "HEAD"})
		if err != nil {
			t.Fatalf("HEAD %s: %v", path, err)
		}
		resp.Body.Close()
		return resp
	}
	const bypass = "wordpress_logged_in_abc=1"
	for _, c := range []struct {
		path, cookie, want string
	}{
		{"/hello.php", "", "13"},      // a fill: the GET's body is known
		{"/hello.php", bypass, ""},    // PHP ran a HEAD: no body, length unknown
		{"/length.php", bypass, "5"},  // the script's own Content-Length
		{"/length.php", "", "5"},      // a fill
		{"/static/style.css", "", ""}, // a static file: its size
	} {
		resp := head(c.path, c.cookie)
		got, ok := resp.Header["Content-Length"]
		switch {
		case resp.StatusCode != 200:
			t.Errorf("HEAD %s (cookie %q): status %d", c.path, c.cookie, resp.StatusCode)
		case c.path == "/static/style.css":
			if !ok || got[0] == "0" {
				t.Errorf("HEAD %s: Content-Length %v, want the file's size", c.path, got)
			}
		case c.want == "" && ok:
			t.Errorf("HEAD %s (cookie %q): Content-Length %v, want none (unknown)", c.path, c.cookie, got)
		case c.want != "" && (!ok || got[0] != c.want):
			t.Errorf("HEAD %s (cookie %q): Content-Length %v, want %s", c.path, c.cookie, got, c.want)
		}
		if resp.Close {
			t.Errorf("HEAD %s (cookie %q) closed the connection", c.path, c.cookie)
		}
	}
}
