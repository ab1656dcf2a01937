package h2

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// External clients: curl (with nghttp2) and h2load; the tests fail
// without them (.ci/deps installs curl and nghttp2-client).

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (%v): .ci/deps installs it (apt-get install curl nghttp2-client)", name, err)
	}
	return p
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestCurl(t *testing.T) {
	curl := lookPath(t, "curl")
	env := startTLS(t, echo, nil)
	port := env.addr[strings.LastIndexByte(env.addr, ':')+1:]
	resolve := "localhost:" + port + ":127.0.0.1"
	url := "https://localhost:" + port + "/c?x=1"
	tests := []struct {
		name, flag, status string
	}{
		{"http2 by ALPN", "--http2", "HTTP/2 200"},
		{"http1.1", "--http1.1", "HTTP/1.1 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(t, curl, "-sS", "-D", "-", tt.flag, "--cacert", env.certF, "--resolve", resolve, url)
			if !strings.HasPrefix(out, tt.status) || !strings.Contains(out, "hello /c?x=1") ||
				!strings.Contains(strings.ToLower(out), "cache-status: ramjet; hit") {
				t.Errorf("curl %s:\n%s", tt.flag, out)
			}
		})
	}
	t.Run("h2c prior knowledge", func(t *testing.T) {
		srv := start(t, Config{Name: "h2c", Addr: "127.0.0.1:0", H2C: true, ReadTimeout: 5 * time.Second}, echo)
		out := run(t, curl, "-sS", "-D", "-", "--http2-prior-knowledge", "http://"+srv.Addr().String()+"/p")
		if !strings.HasPrefix(out, "HTTP/2 200") || !strings.Contains(out, "hello /p") {
			t.Errorf("curl --http2-prior-knowledge:\n%s", out)
		}
	})
}

var h2loadDone = regexp.MustCompile(`requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed`)
var h2loadRate = regexp.MustCompile(`finished in [^,]+, ([\d.]+) req/s`)

// h2load over h2 and over HTTP/1.1 against the same handler: every
// request succeeds, and the rates are logged (go test -v) for comparison.
func TestH2load(t *testing.T) {
	h2load := lookPath(t, "h2load")
	env := startTLS(t, echo, nil)
	for _, proto := range []string{"h2", "h1"} {
		t.Run(proto, func(t *testing.T) {
			args := []string{"-n", "4000", "-c", "8", "-m", "10", env.url("/small")}
			if proto == "h1" {
				args = append([]string{"--h1"}, args...)
			}
			out := run(t, h2load, args...)
			m := h2loadDone.FindStringSubmatch(out)
			if m == nil || m[1] != m[2] || m[3] != "0" {
				t.Fatalf("h2load %s:\n%s", proto, out)
			}
			if r := h2loadRate.FindStringSubmatch(out); r != nil {
				t.Logf("h2load %s -n4000 -c8 -m10: %s req/s", proto, r[1])
			}
		})
	}
}
