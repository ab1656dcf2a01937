package origin

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

const answerOK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// scriptOrigin is an HTTP/1.1 origin on 127.0.0.1 whose connections do
// what the test's script says, request by request: answer writes out
// verbatim (an answer, part of one, or nothing) for the nth request on
// its connection and says whether to keep the connection. It never sends
// Connection: close, as an origin closing at its keep-alive timeout does
// not.
type scriptOrigin struct {
	url    string
	answer func(n int, req *http.Request) (out string, keep bool)
	// requests counts the requests read, by method.
	mu       sync.Mutex
	requests map[string]int
	// closed gets a value each time the origin closes a connection.
	closed chan struct{}
	// ctx is each request's context, done when the test ends.
	ctx   context.Context
	ln    net.Listener
	conns sync.WaitGroup
}

func startScriptOrigin(t *testing.T, answer func(n int, req *http.Request) (string, bool)) *scriptOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &scriptOrigin{url: "http://" + ln.Addr().String(), answer: answer, requests: map[string]int{},
		closed: make(chan struct{}, 64), ctx: ctx, ln: ln}
	o.conns.Add(1)
	go o.accept()
	t.Cleanup(func() { cancel(); ln.Close(); o.conns.Wait() })
	return o
}

func (o *scriptOrigin) accept() {
	defer o.conns.Done()
	var open []net.Conn
	for {
		c, err := o.ln.Accept()
		if err != nil {
			for _, c := range open { // unblock the readers of kept connections
				c.Close()
			}
			return
		}
		open = append(open, c)
		o.conns.Add(1)
		go o.serve(c)
	}
}

func (o *scriptOrigin) serve(c net.Conn) {
	defer o.conns.Done()
	br := bufio.NewReader(c)
	for n := 1; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			c.Close()
			return
		}
		_, _ = io.Copy(io.Discard, req.Body) // a broken body ends the connection at the next read
		o.mu.Lock()
		o.requests[req.Method]++
		o.mu.Unlock()
		out, keep := o.answer(n, req.WithContext(o.ctx))
		_, _ = io.WriteString(c, out) // the client may be gone; the script goes on
		if !keep {
			c.Close()
			o.closed <- struct{}{}
			return
		}
	}
}

// seen is the number of requests with method the origin has read.
func (o *scriptOrigin) seen(method string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[method]
}

// waitClosed waits until the origin has closed n more connections.
func (o *scriptOrigin) waitClosed(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-o.closed:
		case <-time.After(5 * time.Second):
			t.Fatal("origin did not close a connection within 5s")
		}
	}
}

// retryPool is a pool for o that counts its retries.
func retryPool(t *testing.T, o *scriptOrigin, cfg Config) (*Pool, *atomic.Int32) {
	t.Helper()
	var retries atomic.Int32
	cfg.Servers = []string{o.url}
	cfg.Retried = func() { retries.Add(1) }
	return newTestPool(t, cfg), &retries
}

// send sends one request with method (and body, when not nil) and reads
// the answer's body.
func send(p *Pool, method, url string, body io.Reader, size int) (int, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	if body != nil {
		req.SetBodyStream(body, size)
	}
	if method == fasthttp.MethodHead {
		resp.SkipBody = true
	}
	if err := p.Do(req, resp); err != nil {
		return 0, err
	}
	defer resp.CloseBodyStream()
	if s := resp.BodyStream(); s != nil {
		if _, err := io.Copy(io.Discard, s); err != nil {
			return 0, err
		}
	}
	return resp.StatusCode(), nil
}

// answerOnceThenClose answers every connection's first request and closes
// the connection right after, unannounced: the next request on it finds
// it closed.
func answerOnceThenClose(int, *http.Request) (string, bool) { return answerOK, false }

func TestRequestOnConnectionClosedByOriginIsRetriedWhenIdempotent(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		body      string // sent as a stream when not ""; "-" = an empty stream
		wantRetry bool
	}{
		{"GET", fasthttp.MethodGet, "", true},
		{"HEAD", fasthttp.MethodHead, "", true},
		{"OPTIONS", fasthttp.MethodOptions, "", true},
		{"DELETE", fasthttp.MethodDelete, "", true},
		{"PUT with an empty body", fasthttp.MethodPut, "-", true},
		{"PUT with a body already sent", fasthttp.MethodPut, "data", false},
		{"POST is never replayed", fasthttp.MethodPost, "data", false},
		{"POST without a body is never replayed", fasthttp.MethodPost, "", false},
		{"PATCH is never replayed", fasthttp.MethodPatch, "data", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := startScriptOrigin(t, answerOnceThenClose)
			p, retries := retryPool(t, o, Config{})
			if code, err := send(p, fasthttp.MethodGet, o.url+"/warm", nil, 0); err != nil || code != 200 {
				t.Fatalf("first GET: %d %v", code, err)
			}
			o.waitClosed(t, 1) // the pooled connection is now dead
			var body io.Reader
			if tt.body == "-" {
				body = strings.NewReader("")
			} else if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			code, err := send(p, tt.method, o.url+"/x", body, len(strings.TrimPrefix(tt.body, "-")))
			if tt.wantRetry {
				if err != nil || code != 200 {
					t.Fatalf("%s on a closed connection: %d %v, want 200 after a retry", tt.method, code, err)
				}
				if n := retries.Load(); n != 1 {
					t.Fatalf("retries = %d, want 1", n)
				}
				return
			}
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("%s on a closed connection: %d %v, want ErrUnavailable", tt.method, code, err)
			}
			if n := retries.Load(); n != 0 {
				t.Fatalf("retries = %d, want 0", n)
			}
			if n := o.seen(tt.method); n != 0 {
				t.Fatalf("origin read %d %s requests, want none (it had closed the connection)", n, tt.method)
			}
		})
	}
}

// TestRetryDialsInsteadOfTakingAnotherIdleConnection is the 502 of issue
// 14: when the origin closed several idle connections, fasthttp's own
// retry took the next one from the pool, as dead as the first.
func TestRetryDialsInsteadOfTakingAnotherIdleConnection(t *testing.T) {
	const conns = 3
	var arrived sync.WaitGroup
	arrived.Add(conns)
	o := startScriptOrigin(t, func(n int, req *http.Request) (string, bool) {
		if req.URL.Path == "/warm" { // hold the answers until every connection is open
			arrived.Done()
			arrived.Wait()
		}
		return answerOK, false
	})
	p, retries := retryPool(t, o, Config{})
	var warm sync.WaitGroup
	for range conns {
		warm.Go(func() {
			if code, err := send(p, fasthttp.MethodGet, o.url+"/warm", nil, 0); err != nil || code != 200 {
				t.Errorf("warming GET: %d %v", code, err)
			}
		})
	}
	warm.Wait()
	o.waitClosed(t, conns) // the pool now holds three dead connections
	for i := range conns {
		if code, err := send(p, fasthttp.MethodGet, o.url+"/x", nil, 0); err != nil || code != 200 {
			t.Fatalf("GET %d: %d %v, want 200", i, code, err)
		}
	}
	if n := retries.Load(); n != conns {
		t.Fatalf("retries = %d, want %d (one per dead connection)", n, conns)
	}
}

func TestRequestIsNotRetriedWhen(t *testing.T) {
	tests := []struct {
		name   string
		answer func(n int, req *http.Request) (string, bool)
		cfg    Config
		want   error
		reads  int // GETs the origin must have read: no more, so no retry
	}{
		{"the answer had begun", func(n int, _ *http.Request) (string, bool) {
			if n == 1 {
				return answerOK, true
			}
			return "HTTP/1.1 200 OK\r\nContent-Le", false
		}, Config{}, ErrUnavailable, 2},
		{"the connection was new", func(int, *http.Request) (string, bool) { return "", false },
			Config{}, ErrUnavailable, 1},
		{"the origin timed out", func(n int, req *http.Request) (string, bool) {
			if n == 1 {
				return answerOK, true
			}
			<-req.Context().Done() // never answers before the test ends
			return "", false
		}, Config{HeaderTimeout: 100 * time.Millisecond}, ErrTimeout, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := startScriptOrigin(t, tt.answer)
			p, retries := retryPool(t, o, tt.cfg)
			first := tt.reads - 1 // requests answered before the one that fails
			for range first {
				if code, err := send(p, fasthttp.MethodGet, o.url+"/warm", nil, 0); err != nil || code != 200 {
					t.Fatalf("first GET: %d %v", code, err)
				}
			}
			if _, err := send(p, fasthttp.MethodGet, o.url+"/x", nil, 0); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if n := retries.Load(); n != 0 {
				t.Fatalf("retries = %d, want 0", n)
			}
			if n := o.seen(fasthttp.MethodGet); n != tt.reads {
				t.Fatalf("origin read %d GETs, want %d", n, tt.reads)
			}
		})
	}
}

func TestIdleConnectionsAreClosedAfterIdleTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	idle := make(chan time.Duration, 1) // how long the connection sat idle before ramjet closed it
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, answerOK)
		answered := time.Now()
		if _, err := br.ReadByte(); err == io.EOF {
			idle <- time.Since(answered)
		}
	}()
	const timeout = 200 * time.Millisecond
	p := newTestPool(t, Config{Servers: []string{"http://" + ln.Addr().String()}, IdleTimeout: timeout})
	if code, _, err := do(p, "/x"); err != nil || code != 200 {
		t.Fatalf("GET: %d %v", code, err)
	}
	select {
	case d := <-idle:
		if d < timeout-20*time.Millisecond {
			t.Fatalf("closed after %v idle, before the idle timeout %v", d, timeout)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("idle connection still open 2s after the idle timeout %v", timeout)
	}
}

func TestReplayable(t *testing.T) {
	tests := []struct {
		method string
		body   string // "" none; "-" an empty stream; else a stream of it
		raw    bool   // the body is in memory rather than streamed
		want   bool
	}{
		{fasthttp.MethodGet, "", false, true},
		{fasthttp.MethodHead, "", false, true},
		{fasthttp.MethodOptions, "", false, true},
		{fasthttp.MethodDelete, "", false, true},
		{fasthttp.MethodPut, "-", false, true},
		{fasthttp.MethodPut, "data", true, true},
		{fasthttp.MethodPut, "data", false, false},
		{fasthttp.MethodDelete, "data", false, false},
		{fasthttp.MethodPost, "", false, false},
		{fasthttp.MethodPost, "data", true, false},
		{fasthttp.MethodPatch, "", false, false},
		{"CONNECT", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.body, func(t *testing.T) {
			var req fasthttp.Request
			req.Header.SetMethod(tt.method)
			switch {
			case tt.raw:
				req.SetBodyRaw([]byte(tt.body))
			case tt.body == "-":
				req.SetBodyStream(strings.NewReader(""), 0)
			case tt.body != "":
				req.SetBodyStream(strings.NewReader(tt.body), len(tt.body))
			}
			if got := replayable(&req); got != tt.want {
				t.Fatalf("replayable = %v, want %v", got, tt.want)
			}
		})
	}
}
