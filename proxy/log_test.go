package proxy

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
)

// ramjetLine is a line of the ramjet format: combined, then Cache-Status,
// request time, origin time, site.
var ramjetLine = regexp.MustCompile(`^(\S+) - - \[[^\]]+\] "(\S+) (\S+) (\S+)" (\d{3}) (\d+|-) "([^"]*)" "([^"]*)" "([^"]*)" (\d+\.\d{6}) (\d+\.\d{6}|-) (\S+)$`)

type logLine struct {
	addr, method, uri, proto, status, bytes, referer, agent, cacheStatus, requestTime, originTime, site string
}

// logLines closes p, which writes every line, and reads the file.
func logLines(t *testing.T, p *Proxy, path string) []logLine {
	t.Helper()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []logLine
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		m := ramjetLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a ramjet-format line: %q", l)
		}
		out = append(out, logLine{m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11], m[12]})
	}
	return out
}

func logOrigin(t *testing.T) *testOrigin {
	return newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/broken": // the connection ends without an answer: 502
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		case "/esi":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			io.WriteString(w, `<esi:include src="/f1"/>-<esi:include src="/f2"/>`)
		case "/form":
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, "created")
		default:
			w.Header().Set("Cache-Control", "max-age=300")
			io.WriteString(w, "page "+r.URL.Path)
		}
	})
}

// TestLogWritesOneLinePerClientRequest: hits, misses, passes and errors
// each get a line with what the client was sent; an ESI page's fragments
// and an inline request that was declined get none; Authorization and
// Cookie values never appear.
func TestLogWritesOneLinePerClientRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	cfg := testConfig(logOrigin(t).URL)
	cfg.Default.ESI = true
	cfg.Sites = []Site{{Names: []string{"Shop.Test"}, Cache: true, AccessLog: AccessLog{Path: path, Format: accesslog.Ramjet}}}
	cfg.Default.AccessLog = AccessLog{Path: path, Format: accesslog.Ramjet}
	p := newTestProxy(t, cfg, nil)
	serve := func(method, host, uri string, hdr ...string) *fasthttp.RequestCtx {
		ctx := requestCtx(method, host, uri, false)
		for i := 0; i+1 < len(hdr); i += 2 {
			ctx.Request.Header.Set(hdr[i], hdr[i+1])
		}
		p.ServeFastHTTP(ctx)
		return ctx
	}
	serve("GET", "site.test:8080", "/page?utm_source=x&b=1", "Cookie", "session=SECRET-COOKIE",
		"User-Agent", `agent "quoted"`, "Referer", "https://ref.test/")
	serve("GET", "site.test:8080", "/page?utm_source=x&b=1")
	serve("HEAD", "site.test:8080", "/page?utm_source=x&b=1")
	serve("POST", "shop.test", "/form", "Authorization", "Basic U0VDUkVULVVTRVI6U0VDUkVULVBBU1M=")
	serve("GET", "site.test", "/broken")
	if body := string(serve("GET", "site.test", "/esi").Response.Body()); body != "page /f1-page /f2" {
		t.Fatalf("ESI page %q", body)
	}
	if p.ServeHit(requestCtx("GET", "site.test", "/inline", false)) {
		t.Fatal("a miss was answered inline")
	}
	serve("GET", "site.test", "/inline")
	if !p.ServeHit(requestCtx("GET", "site.test", "/inline", false)) {
		t.Fatal("a hit was declined inline")
	}

	got := logLines(t, p, path)
	want := []logLine{
		{"127.0.0.1", "GET", "/page?utm_source=x&b=1", "HTTP/1.1", "200", "10", "https://ref.test/", `agent \x22quoted\x22`, "ramjet; fwd=miss; stored", "", "origin", "site.test"},
		{"127.0.0.1", "GET", "/page?utm_source=x&b=1", "HTTP/1.1", "200", "10", "-", "-", "ramjet; hit", "", "-", "site.test"},
		{"127.0.0.1", "HEAD", "/page?utm_source=x&b=1", "HTTP/1.1", "200", "0", "-", "-", "ramjet; hit", "", "-", "site.test"},
		{"127.0.0.1", "POST", "/form", "HTTP/1.1", "201", "7", "-", "-", "ramjet; fwd=method", "", "origin", "shop.test"},
		{"127.0.0.1", "GET", "/broken", "HTTP/1.1", "502", "12", "-", "-", "-", "", "origin", "site.test"},
		{"127.0.0.1", "GET", "/esi", "HTTP/1.1", "200", "17", "-", "-", "ramjet; fwd=miss; stored", "", "origin", "site.test"},
		{"127.0.0.1", "GET", "/inline", "HTTP/1.1", "200", "12", "-", "-", "ramjet; fwd=miss; stored", "", "origin", "site.test"},
		{"127.0.0.1", "GET", "/inline", "HTTP/1.1", "200", "12", "-", "-", "ramjet; hit", "", "-", "site.test"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if w.originTime == "origin" && g.originTime != "-" {
			w.originTime = g.originTime // a time, whatever it was
		}
		w.requestTime = g.requestTime
		if g != w {
			t.Errorf("line %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "U0VDUkVU") {
		t.Errorf("a credential reached the access log:\n%s", b)
	}
}

// TestReloadToAnotherPathLosesNoLine: requests run on while a reload
// moves the log to another file; every answered request has its line in
// one of the two, and the file kept by a reload is the same writer.
func TestReloadToAnotherPathLosesNoLine(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	cfg := testConfig(logOrigin(t).URL)
	cfg.Default.AccessLog = AccessLog{Path: a, Format: accesslog.Ramjet}
	p := newTestProxy(t, cfg, nil)
	first := p.gen.Load().logs[0]
	if err := p.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if p.gen.Load().logs[0] != first {
		t.Fatal("a reload naming the same path opened it again")
	}
	var served, target atomic.Int64
	reached := make(chan struct{}, 2) // a worker served the target-th request
	target.Store(2000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			uri := "/page" + strconv.Itoa(i)
			for {
				select {
				case <-stop:
					return
				default:
				}
				p.ServeFastHTTP(requestCtx("GET", "site.test", uri, false))
				if served.Add(1) == target.Load() {
					reached <- struct{}{}
				}
				// A client's request waits for the network, which lets the
				// writer's goroutine run; a loop of handler calls must let it,
				// or it fills the buffer faster than any disk empties it.
				runtime.Gosched()
			}
		})
	}
	<-reached // the reload comes amid the requests
	cfg.Default.AccessLog.Path = b
	if err := p.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	target.Store(served.Load() + 2000)
	<-reached
	close(stop)
	wg.Wait()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range []string{a, b} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(data), "\n") == 0 {
			t.Errorf("%s has no line", f)
		}
		lines += strings.Count(string(data), "\n")
	}
	if int64(lines) != served.Load() || p.logs.Dropped() != 0 {
		t.Errorf("%d lines in the two files, %d dropped, for %d requests", lines, p.logs.Dropped(), served.Load())
	}
}

// openHere reports whether this process has path open.
func openHere(path string) bool {
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestReloadToAFileThatCannotBeOpenedKeepsTheRunningLog: the reload fails
// before the swap, the running generation keeps logging to its file, and
// a request after Close neither hangs nor writes.
func TestReloadToAFileThatCannotBeOpenedKeepsTheRunningLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	cfg := testConfig(logOrigin(t).URL)
	cfg.Default.AccessLog = AccessLog{Path: path, Format: accesslog.Ramjet}
	p := newTestProxy(t, cfg, nil)
	bad := cfg
	bad.Default.AccessLog.Path = filepath.Join(dir, "missing", "access.log")
	bad.Sites = []Site{{Names: []string{"other.test"}, AccessLog: AccessLog{Path: filepath.Join(dir, "other.log")}}}
	if err := p.Reload(t.Context(), bad); err == nil {
		t.Fatal("a reload to a log in a missing directory succeeded")
	}
	p.ServeFastHTTP(requestCtx("GET", "site.test", "/after-the-failed-reload", false))
	if got := logLines(t, p, path); len(got) != 1 || got[0].uri != "/after-the-failed-reload" {
		t.Errorf("running log holds %+v, want the request after the failed reload", got)
	}
	if openHere(filepath.Join(dir, "other.log")) {
		t.Error("the failed reload left the other site's file open")
	}
	p.ServeFastHTTP(requestCtx("GET", "site.test", "/after-close", false))
	if p.logs.Dropped() != 1 {
		t.Errorf("dropped %d after a request past Close, want 1", p.logs.Dropped())
	}
}
