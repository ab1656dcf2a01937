package main_test

// End-to-end tests of ramjet's connections to the origin: what happens when
// the origin closes a keep-alive connection ramjet is about to reuse, and
// ramjet closing idle connections before the origin does (issue 14).

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// closingOrigin is an HTTP/1.1 origin on 127.0.0.1 that closes keep-alive
// connections the way busy or impatient origins do, without a Connection:
// close: after every N answers on a connection, after a random idle time
// between requests (a keep-alive timeout that fires at any moment, also
// just as ramjet sends the next request), or after a fixed keep-alive
// timeout. It answers every request 200 with Cache-Control: no-store, so
// that each one reaches it.
type closingOrigin struct {
	URL string
	closingPolicy

	// requests counts the requests read, by method.
	mu       sync.Mutex
	requests map[string]int
	// closed gets a value each time the origin closes a connection
	// (noteClosed); clientClosed how long a connection had been idle when
	// the client closed it.
	closed       chan struct{}
	clientClosed chan time.Duration

	ln    net.Listener
	conns sync.WaitGroup
}

// closingPolicy says when a closingOrigin closes a connection; zero
// fields never.
type closingPolicy struct {
	every     int           // right after each connection's every-th answer
	idleMax   time.Duration // once idle for a random time in [0, idleMax)
	keepAlive time.Duration // once idle this long
}

func startClosingOrigin(t *testing.T, p closingPolicy) *closingOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &closingOrigin{URL: "http://" + ln.Addr().String(), closingPolicy: p, requests: map[string]int{},
		closed: make(chan struct{}, 16), clientClosed: make(chan time.Duration, 16), ln: ln}
	o.conns.Add(1)
	go o.accept()
	t.Cleanup(func() { ln.Close(); o.conns.Wait() })
	return o
}

func (o *closingOrigin) accept() {
	defer o.conns.Done()
	var mu sync.Mutex // guards open
	open := map[net.Conn]struct{}{}
	defer func() { // unblock the readers of the connections still open
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := o.ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		open[c] = struct{}{}
		mu.Unlock()
		o.conns.Add(1)
		go func() {
			defer o.conns.Done()
			o.serve(c)
			mu.Lock()
			delete(open, c)
			mu.Unlock()
		}()
	}
}

func (o *closingOrigin) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	answered := time.Now()
	for n := 1; ; n++ {
		if d := o.idleDeadline(n); d > 0 {
			_ = c.SetReadDeadline(time.Now().Add(d)) // a failure shows at the read
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			o.ended(n, err, time.Since(answered))
			return
		}
		_ = c.SetReadDeadline(time.Time{}) // reading the body: the request has come
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		o.mu.Lock()
		o.requests[req.Method]++
		o.mu.Unlock()
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nCache-Control: no-store\r\n\r\nok\n"); err != nil {
			return
		}
		answered = time.Now()
		if o.every > 0 && n%o.every == 0 {
			o.noteClosed()
			return
		}
	}
}

// idleDeadline is how long the origin waits for the nth request on a
// connection; 0 is forever.
func (o *closingOrigin) idleDeadline(n int) time.Duration {
	switch {
	case n == 1:
		return 0
	case o.idleMax > 0:
		return 1 + rand.N(o.idleMax)
	default:
		return o.keepAlive
	}
}

// ended notes why a connection ended before its nth request.
func (o *closingOrigin) ended(n int, err error, idle time.Duration) {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		o.noteClosed()
	case errors.Is(err, io.EOF) && n > 1:
		select {
		case o.clientClosed <- idle:
		default: // nobody is asking
		}
	}
}

// noteClosed tells a waiting test that the origin closed a connection;
// under load, when nobody waits, the notes beyond the buffer are dropped.
func (o *closingOrigin) noteClosed() {
	select {
	case o.closed <- struct{}{}:
	default:
	}
}

// seen is the number of requests with method the origin has read.
func (o *closingOrigin) seen(method string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests[method]
}

// waitClosed waits until the origin has closed a connection.
func (o *closingOrigin) waitClosed(t *testing.T) {
	t.Helper()
	select {
	case <-o.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("origin did not close a connection within 10s")
	}
}

func TestGETsSucceedWhileTheOriginClosesKeepAliveConnections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy closingPolicy
	}{
		{"idle connections closed at random moments", closingPolicy{idleMax: 2 * time.Millisecond}},
		{"every 10th answer closes its connection", closingPolicy{every: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := startClosingOrigin(t, tt.policy)
			rj := startRamjet(t, o.URL)
			c := newClient(t)
			r := testbed.Wrk(t, rj.URL+"/page", 8, 3*time.Second)
			// The origin answers only 200: an answer of 400 or more (what
			// wrk counts) is ramjet's own, a 502.
			if r.Requests == 0 || r.Errors != 0 || r.SocketErrors != 0 {
				t.Fatalf("%d requests, %d with a status of 400 or more, %d socket errors; want none failed:\n%s",
					r.Requests, r.Errors, r.SocketErrors, r.Output)
			}
			if n, _ := metric(t, c, rj, `ramjet_origin_errors_total{kind="unavailable"}`); n != 0 {
				t.Errorf("ramjet_origin_errors_total{kind=\"unavailable\"} = %v, want 0", n)
			}
			if n, _ := metric(t, c, rj, "ramjet_origin_retries_total"); n == 0 {
				t.Errorf("ramjet_origin_retries_total = 0: the origin closed no connection ramjet reused, so this proved nothing")
			}
		})
	}
}

func TestRequestOnAConnectionTheOriginClosedIsRetriedUnlessPOSTOrPATCH(t *testing.T) {
	t.Parallel()
	o := startClosingOrigin(t, closingPolicy{every: 1}) // each connection answers once
	rj := startRamjet(t, o.URL)
	c := newClient(t)
	tests := []struct {
		method, body string
		want         int // ramjet's answer
		retried      bool
	}{
		{http.MethodGet, "", http.StatusOK, true},
		{http.MethodHead, "", http.StatusOK, true},
		{http.MethodOptions, "", http.StatusOK, true},
		{http.MethodDelete, "", http.StatusOK, true},
		{http.MethodPut, "", http.StatusOK, true},
		{http.MethodPut, "a body, sent on the dead connection already", http.StatusBadGateway, false},
		{http.MethodPost, "comment=hello", http.StatusBadGateway, false},
		{http.MethodPatch, "title=new", http.StatusBadGateway, false},
	}
	for _, tt := range tests { // in turn: they share the origin's counts
		name := tt.method
		if tt.body != "" {
			name += " with a body"
		}
		t.Run(name, func(t *testing.T) {
			mustStatus(t, get(t, c, rj.URL+"/warm"), http.StatusOK, "GET that pools a connection")
			o.waitClosed(t) // ramjet's pooled connection is now dead
			seen := o.seen(tt.method)
			before, _ := metric(t, c, rj, "ramjet_origin_retries_total")
			r, err := tryDo(c, tt.method, rj.URL+"/page", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			mustStatus(t, r, tt.want, tt.method+" on the dead connection")
			after, _ := metric(t, c, rj, "ramjet_origin_retries_total")
			if retried := after > before; retried != tt.retried {
				t.Errorf("ramjet_origin_retries_total %v -> %v, want a retry: %v", before, after, tt.retried)
			}
			if !tt.retried && o.seen(tt.method) != seen {
				t.Errorf("origin read the %s, want it sent to the dead connection only", tt.method)
			}
		})
	}
}

func TestIdleOriginConnectionsAreClosedBeforeTheOriginDoes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		config    string        // ramjet's file; "" = the defaults
		keepAlive time.Duration // the origin's keep-alive timeout
		idle      time.Duration // ramjet's idle timeout
	}{
		{"default, under Apache's and node's 5s", "", 5 * time.Second, 4 * time.Second},
		{"origin.idle_timeout", "origin:\n  idle_timeout: 300ms\n", time.Second, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := startClosingOrigin(t, closingPolicy{keepAlive: tt.keepAlive})
			var args []string
			if tt.config != "" {
				args = []string{"--config", testbed.WriteConfig(t, "", tt.config)}
			}
			rj := startRamjet(t, o.URL, args...)
			c := newClient(t)
			mustStatus(t, get(t, c, rj.URL+"/page"), http.StatusOK, "GET")
			select {
			case d := <-o.clientClosed:
				if d < tt.idle-50*time.Millisecond {
					t.Fatalf("ramjet closed the connection after %v idle, before its idle timeout %v", d, tt.idle)
				}
			case <-o.closed:
				t.Fatalf("the origin closed the idle connection at its keep-alive timeout %v, before ramjet did", tt.keepAlive)
			case <-time.After(tt.keepAlive + 10*time.Second):
				t.Fatal("nobody closed the idle connection")
			}
		})
	}
}
