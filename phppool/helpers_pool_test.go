package phppool

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testdataScript copies testdata/name into a public directory, so workers
// running as nobody can read it.
func testdataScript(t testing.TB, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return writeScript(t, name, string(src))
}

// scriptParams are the CGI params for running script with method and query.
func scriptParams(script, method, query string) []Param {
	return []Param{
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SCRIPT_FILENAME", script},
		{"SCRIPT_NAME", "/" + filepath.Base(script)},
		{"REQUEST_METHOD", method},
		{"REQUEST_URI", "/" + filepath.Base(script) + "?" + query},
		{"QUERY_STRING", query},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"REDIRECT_STATUS", "200"},
		{"CONTENT_LENGTH", "0"},
	}
}

// run runs script on p and returns the response body after the CGI head.
func run(ctx context.Context, p *Pool, script, method, query string) (string, error) {
	var out bytes.Buffer
	if _, err := p.Do(ctx, scriptParams(script, method, query), nil, &out, io.Discard); err != nil {
		return "", err
	}
	r := bufioReader(out.Bytes())
	if _, _, err := ReadResponseHead(r); err != nil {
		return "", err
	}
	body, _ := r.ReadString(0) // reads to EOF; io.EOF is expected
	return body, nil
}

// runFor is run with a 10s bound, so a hung pool fails the test.
func runFor(p *Pool, script, method, query string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return run(ctx, p, script, method, query)
}

// logBuffer collects a pool's log as text; safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// testEngine is the engine startPool gives a Config that names none: ""
// (the default, shared) except while TestSeparateEngineKeepsIssue5Behaviour
// runs the pool tests again on the separate engine. Top-level tests run
// one at a time until they call t.Parallel, so switching it is safe there.
var testEngine Engine

// startPool starts a pool on the real php-cgi with a logger (nil: none);
// Close runs at cleanup.
func startPool(t testing.TB, cfg Config, log *slog.Logger) *Pool {
	t.Helper()
	cfg.Name = t.Name()
	cfg.Binary = phpCGIPath
	if cfg.Engine == "" {
		cfg.Engine = testEngine
	}
	p, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

// deadConn is a Conn whose peer already closed the connection, as a
// worker that died while idle leaves it.
func deadConn(t *testing.T) *Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if err := peer.Close(); err != nil {
		t.Fatal(err)
	}
	return NewConn(nc)
}

// breakIdleWorker swaps the top idle worker's connection for a dead one,
// as if the worker had died a moment ago and its reaper had not run yet,
// and returns the worker's pid. The worker counts as having served a
// request: a never-used one would redial (redialFresh), which a dead
// process refuses but this live one would accept.
func breakIdleWorker(t *testing.T, p *Pool) int {
	t.Helper()
	dead := deadConn(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) == 0 {
		t.Fatal("no idle worker")
	}
	w := p.idle[len(p.idle)-1]
	// Closing the real connection lets php-cgi exit promptly on SIGTERM.
	if err := w.conn.Load().Close(); err != nil {
		t.Fatal(err)
	}
	w.conn.Store(dead)
	w.requests = 1
	return w.pid
}
