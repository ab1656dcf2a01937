package proxy

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// startSlowServer answers after wait, with the length of the request's
// body read whole (a stream: StreamRequestBody).
func startSlowServer(t *testing.T, cfg ServerConfig, wait time.Duration) *Server {
	t.Helper()
	cfg.Name, cfg.Addr = "test", "127.0.0.1:0"
	s := NewServer(cfg, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(wait)
		n := len(ctx.Request.Body())
		if r := ctx.RequestBodyStream(); r != nil {
			b, err := io.ReadAll(r)
			if err != nil {
				ctx.SetStatusCode(fasthttp.StatusRequestTimeout)
				return
			}
			n = len(b)
		}
		ctx.SetBodyString(strings.Repeat("x", n))
	}, discardLog)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// TestBodilessRequestAnsweredAfterItsHeaderTimeoutKeepsItsConnection: a
// request without a body keeps its header's read deadline while it is
// served (the body's is not armed); an answer that takes longer than the
// header timeout goes out, and the connection serves the next request.
func TestBodilessRequestAnsweredAfterItsHeaderTimeoutKeepsItsConnection(t *testing.T) {
	s := startSlowServer(t, ServerConfig{IdleTimeout: time.Minute, HeaderTimeout: 100 * time.Millisecond,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute}, 300*time.Millisecond)
	c := dial(t, s)
	for i := range 2 {
		if code, _, err := c.get(); err != nil || code != 200 {
			t.Fatalf("request %d: %d %v", i+1, code, err)
		}
	}
}

// TestRequestBodyArrivingAfterTheHeaderTimeoutIsRead: a request with a
// body still gets the read timeout for it once its header is in.
func TestRequestBodyArrivingAfterTheHeaderTimeoutIsRead(t *testing.T) {
	s := startSlowServer(t, ServerConfig{IdleTimeout: time.Minute, HeaderTimeout: 100 * time.Millisecond,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute, BufferBody: 1}, 0)
	c := dial(t, s)
	io.WriteString(c.c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
	time.Sleep(300 * time.Millisecond) // past the header timeout, well within the read timeout
	io.WriteString(c.c, "67890")
	code, body, err := c.read()
	if err != nil || code != 200 || len(body) != 10 {
		t.Fatalf("answer %d %q %v, want 200 and the 10 bytes' length", code, body, err)
	}
	if code, _, err := c.get(); err != nil || code != 200 {
		t.Fatalf("next request: %d %v", code, err)
	}
}

// TestOnlyARequestWithABodyMovesItsReadDeadline: at the header's end the
// hook gives a request with a body (a length, or chunked) the body's
// read timeout, and leaves one without a body under its header's.
func TestOnlyARequestWithABodyMovesItsReadDeadline(t *testing.T) {
	_, hook := ReadTimeouts(10*time.Second, time.Minute)
	for _, tc := range []struct {
		name, head string
		want       time.Duration
	}{
		{"GET", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0},
		{"HEAD", "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n", 0},
		{"POST, empty", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 0},
		{"POST", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", time.Minute},
		{"chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", time.Minute},
		{"GET with a body", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n", time.Minute},
	} {
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(tc.head))); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := hook(&h).ReadTimeout; got != tc.want {
			t.Errorf("%s: read timeout %v, want %v", tc.name, got, tc.want)
		}
	}
}
