package h2

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

var page725 = bytes.Repeat([]byte("x"), 725)

func page725Handler(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Cache-Status", "ramjet; hit")
	ctx.Response.Header.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(page725)
}

// syscalls is the process's read and write system calls so far.
func syscalls() (r, w int) {
	b, _ := os.ReadFile("/proc/self/io")
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, _ := strconv.Atoi(v)
		switch k {
		case "syscr":
			r = n
		case "syscw":
			w = n
		}
	}
	return r, w
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestH2loadCPU measures the server's CPU per request under h2load
// (the bench/run load: -t1 -c100 -m10 on a 725 B page; H2_PERF_LOAD
// and H2_PERF_SIZE change it), over h2 and
// HTTP/1.1. Set H2_PERF=1 (H2_PERF_N for the request count); run the
// test on one core with GOMAXPROCS=1, h2load is pinned with
// H2_PERF_CPU (a taskset core list). H2_PERF_INLINE=1 serves the page
// through Config.Inline, as ramjet serves a cache hit.
func TestH2loadCPU(t *testing.T) {
	if os.Getenv("H2_PERF") == "" {
		t.Skip("H2_PERF not set")
	}
	h2load := lookPath(t, "h2load")
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("H2_PERF_N")); err == nil {
		n = v
	}
	h := page725Handler
	if size, err := strconv.Atoi(os.Getenv("H2_PERF_SIZE")); err == nil { // body bytes, 725 by default
		page := bytes.Repeat([]byte("x"), size)
		h = func(ctx *fasthttp.RequestCtx) {
			ctx.Response.Header.Set("Cache-Status", "ramjet; hit")
			ctx.Response.Header.SetContentType("text/html; charset=utf-8")
			ctx.SetBody(page)
		}
	}
	var mod func(*Config)
	if os.Getenv("H2_PERF_INLINE") != "" { // the page served as Inline, as a cache hit is
		mod = func(c *Config) { c.Inline = func(ctx *fasthttp.RequestCtx) bool { h(ctx); return true } }
	}
	env := startTLS(t, h, mod)
	protos := strings.Fields(os.Getenv("H2_PERF_PROTOS"))
	if len(protos) == 0 {
		protos = []string{"h2", "h1"}
	}
	for _, proto := range protos {
		load := strings.Fields(os.Getenv("H2_PERF_LOAD")) // "-c100 -m10" by default
		if len(load) == 0 {
			load = []string{"-c100", "-m10"}
		}
		args := append([]string{"-t1", "-n", strconv.Itoa(n)}, append(load, env.url("/"))...)
		if proto == "h1" {
			args = append([]string{"--h1"}, args...)
		}
		name := h2load
		if cpu := os.Getenv("H2_PERF_CPU"); cpu != "" {
			args = append([]string{"-c", cpu, h2load}, args...)
			name = "taskset"
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		r0, w0 := syscalls()
		c0, t0 := cpuNow(), time.Now()
		out, err := exec.Command(name, args...).CombinedOutput()
		cpu, wall := cpuNow()-c0, time.Since(t0)
		r1, w1 := syscalls()
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		m := h2loadDone.FindStringSubmatch(string(out))
		if m == nil || m[1] != m[2] || m[3] != "0" {
			t.Fatalf("h2load %s:\n%s", proto, out)
		}
		t.Logf("%s: %d req in %v, %.0f req/s, server CPU %.2f µs/req, %.2f reads %.2f writes %.1f allocs %.0f B /req", proto, n, wall.Round(time.Millisecond),
			float64(n)/wall.Seconds(), float64(cpu.Microseconds())/float64(n), float64(r1-r0)/float64(n), float64(w1-w0)/float64(n),
			float64(m1.Mallocs-m0.Mallocs)/float64(n), float64(m1.TotalAlloc-m0.TotalAlloc)/float64(n))
	}
}
