package proxy

import (
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
