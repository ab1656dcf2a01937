package main_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestDocrootCachesWhatPHPMarksAndPurgesByTag(t *testing.T) {
	rj, _ := startPHP(t, "")
	c := &http.Client{Timeout: 10 * time.Second}
	first := get(t, c, rj.URL+"/cached.php?id=1")
	mustStatus(t, first, 200, "first")
	if cs := first.Header.Get("Cache-Status"); !strings.Contains(cs, "stored") {
		t.Fatalf("first: Cache-Status %q, want stored", cs)
	}
	second := get(t, c, rj.URL+"/cached.php?id=1")
	if cs := second.Header.Get("Cache-Status"); cs != "ramjet; hit" || !bytes.Equal(first.Body, second.Body) {
		t.Fatalf("second: Cache-Status %q, body %q vs %q", cs, second.Body, first.Body)
	}
	if h := second.Header.Get("X-LiteSpeed-Tag"); h != "" {
		t.Fatalf("internal tag header reached the client: %q", h)
	}
	mustStatus(t, adminPost(t, c, rj, "tag=post_1", "", ""), 200, "purge by tag")
	third := get(t, c, rj.URL+"/cached.php?id=1")
	if bytes.Equal(third.Body, first.Body) {
		t.Fatalf("served the purged page again: %q", third.Body)
	}
	// Plain scripts without cache headers are never stored.
	get(t, c, rj.URL+"/hello.php")
	if cs := get(t, c, rj.URL+"/hello.php").Header.Get("Cache-Status"); strings.Contains(cs, "hit") {
		t.Fatalf("uncacheable script served from cache: %q", cs)
	}
}

func TestDocrootSendsLSCacheHeaderToPHP(t *testing.T) {
	rj, _ := startPHP(t, "")
	r := get(t, &http.Client{Timeout: 10 * time.Second}, rj.URL+"/env.php")
	if !bytes.Contains(r.Body, []byte("lscache: on\n")) {
		t.Fatalf("PHP did not see X-LSCACHE: on:\n%s", r.Body)
	}
}

func TestDocrootPHPOnlyBesideTheOrigin(t *testing.T) {
	o := startOrigin(t)
	root := phpDocroot(t)
	cfg := testbed.WriteConfig(t, "", "defaults:\n  docroot:\n    root: \""+root+"\"\n    serve: php\n    php:\n      workers: 1\n")
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := &http.Client{Timeout: 10 * time.Second}
	r := get(t, c, rj.URL+"/hello.php")
	mustStatus(t, r, 200, "script from the pool")
	if string(r.Body) != "Hello, World!" {
		t.Fatalf("script body %q", r.Body)
	}
	if n := o.loggedRequests(t, "/hello.php"); n != 0 {
		t.Fatalf("the origin saw %d requests for a script the pool serves", n)
	}
	r = get(t, c, rj.URL+"/static/big2m.txt")
	mustStatus(t, r, 200, "static from the origin")
	if n := o.waitRequests(t, "/static/big2m.txt", 1); len(r.Body) != size2MiB || n != 1 {
		t.Fatalf("static file: %d bytes, origin requests %d", len(r.Body), n)
	}
}

func TestDocrootStaticFilesCachedWhenConfigured(t *testing.T) {
	root := phpDocroot(t)
	cfg := testbed.WriteConfig(t, "", "defaults:\n  docroot:\n    root: \""+root+"\"\n    static_ttl: 1h\n")
	rj := startRamjet(t, "", "--config", cfg)
	c := &http.Client{Timeout: 10 * time.Second}
	get(t, c, rj.URL+"/static/style.css")
	r := get(t, c, rj.URL+"/static/style.css")
	if cs := r.Header.Get("Cache-Status"); cs != "ramjet; hit" {
		t.Fatalf("static file with static_ttl: Cache-Status %q", cs)
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on a static file")
	}
	mustStatus(t, get(t, c, rj.URL+"/static/style.css", "If-None-Match: "+etag), 304, "conditional hit")
}

// A large static file leaves by sendfile: ramjet's read system calls
// (/proc/PID/io syscr; sendfile counts one per call) stay few, where a
// copy through a 32 KB buffer would make hundreds. A range of it too.
func TestDocrootLargeStaticFileIsSentWithSendfile(t *testing.T) {
	root := phpDocroot(t)
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(root, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testbed.WriteConfig(t, "", "defaults:\n  docroot:\n    root: \""+root+"\"\n")
	rj := startRamjet(t, "", "--config", cfg)
	c := &http.Client{Timeout: 20 * time.Second}
	get(t, c, rj.URL+"/static/style.css") // warm the connection and the lookup cache
	before := readSyscalls(t, rj.Pid())
	r := get(t, c, rj.URL+"/big.bin")
	after := readSyscalls(t, rj.Pid())
	mustStatus(t, r, 200, "large static file")
	if !bytes.Equal(r.Body, data) {
		t.Fatalf("large static file: %d bytes, not the file's", len(r.Body))
	}
	if n := after - before; n > 64 {
		t.Fatalf("%d read system calls for an 8 MiB file: it was copied, not sent with sendfile", n)
	}
	r = get(t, c, rj.URL+"/big.bin", "Range: bytes=1000000-5999999")
	mustStatus(t, r, 206, "range of a large static file")
	if !bytes.Equal(r.Body, data[1000000:6000000]) {
		t.Fatalf("range: %d bytes, not the file's", len(r.Body))
	}
}

// readSyscalls is the syscr line of /proc/PID/io.
func readSyscalls(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no syscr in /proc/%d/io", pid)
	return 0
}
