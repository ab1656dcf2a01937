package h3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/certs"
	"github.com/ramjet-proxy/ramjet/proxy/certs/certtest"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

func testLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// env is a server on 127.0.0.1 with a certificate from a test CA.
type env struct {
	ca   *certtest.CA
	srv  *Server
	addr string
}

func startEnv(t testing.TB, h fasthttp.RequestHandler, mod func(*Config)) *env {
	t.Helper()
	ca := certtest.NewCA(t, "ramjet h3 test CA")
	c, k := ca.Issue(t, "", "localhost", "127.0.0.1").Write(t, t.TempDir(), "server")
	store, err := certs.New(certs.Config{Default: certs.Pair{CertFile: c, KeyFile: k}, DisableOCSP: true}, testLog())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "h3", Addr: "127.0.0.1:0", TLS: store.TLSConfig(), IdleTimeout: 10 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := NewServer(cfg, h, testLog())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &env{ca: ca, srv: srv, addr: srv.Addr().String()}
}

func (e *env) url(path string) string { return "https://" + e.addr + path }

// client is quic-go's HTTP/3 client, one connection per address.
func (e *env) client(t testing.TB) (*http.Client, *http3.Transport) {
	t.Helper()
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.ca.Pool(), ServerName: "localhost", ClientSessionCache: tls.NewLRUClientSessionCache(8)},
		QUICConfig:      &quic.Config{MaxIdleTimeout: 10 * time.Second},
	}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, tr
}

func echoHandler(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/upload":
		sum := sha256.Sum256(ctx.Request.Body())
		fmt.Fprintf(ctx, "%x %d", sum, len(ctx.Request.Body()))
	case "/big":
		ctx.SetBody(bytes.Repeat([]byte("0123456789abcdef"), 2<<20/16))
	case "/stream":
		ctx.SetBodyStream(strings.NewReader(strings.Repeat("s", 100<<10)), -1)
	default:
		ctx.Response.Header.Set("X-Path", string(ctx.Path()))
		ctx.Response.Header.Set("X-Method", string(ctx.Method()))
		ctx.Response.Header.Set("X-Host", string(ctx.Host()))
		ctx.Response.Header.Set("X-Early", string(ctx.Request.Header.Peek("Early-Data")))
		ctx.Response.Header.Set("X-TLS", fmt.Sprintf("%v %s", ctx.IsTLS(), streamctx.TransportOf(ctx).Protocol().Version()))
		ctx.Response.Header.Set("X-Remote", ctx.RemoteAddr().String())
		ctx.SetContentType("text/plain")
		ctx.SetBodyString("hello " + string(ctx.Request.Header.Peek("X-Test")))
	}
}

func TestRequestReachesHandlerAsRequestCtx(t *testing.T) {
	e := startEnv(t, echoHandler, nil)
	c, _ := e.client(t)
	req, _ := http.NewRequest("GET", e.url("/a/b?q=1"), nil)
	req.Header.Set("X-Test", "there")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checks := map[string]string{
		"X-Path": "/a/b", "X-Method": "GET", "X-Host": e.addr, "X-TLS": "true HTTP/3.0",
		"Content-Type": "text/plain", "Server": "ramjet", "Content-Length": "11",
	}
	for k, want := range checks {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if resp.ProtoMajor != 3 || string(body) != "hello there" || resp.Header.Get("Date") == "" {
		t.Fatalf("proto %d body %q date %q", resp.ProtoMajor, body, resp.Header.Get("Date"))
	}
	if !strings.HasPrefix(resp.Header.Get("X-Remote"), "127.0.0.1:") {
		t.Fatalf("remote %q", resp.Header.Get("X-Remote"))
	}
}

func TestBodiesByteExactBothWays(t *testing.T) {
	e := startEnv(t, echoHandler, nil)
	uploadByteExact(t, e)
	c, _ := e.client(t)
	for _, path := range []string{"/big", "/stream"} {
		resp, err := c.Get(e.url(path))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := bytes.Repeat([]byte("0123456789abcdef"), 2<<20/16)
		if path == "/stream" {
			want = bytes.Repeat([]byte("s"), 100<<10)
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes (%v), want %d", path, len(got), err, len(want))
		}
	}
}

func TestOversizedHeadersGet431(t *testing.T) {
	e := startEnv(t, echoHandler, func(c *Config) { c.MaxHeaderBytes = 4 << 10 })
	c, _ := e.client(t)
	req, _ := http.NewRequest("GET", e.url("/"), nil)
	req.Header.Set("X-Big", strings.Repeat("b", 8<<10))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 431 {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
	resp, err = c.Get(e.url("/after"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status after 431: %d", resp.StatusCode)
	}
}

// TestSmallFlowControlWindowsStillUpload: with the smallest windows
// config takes, a 2 MiB upload arrives byte-exact (the client waits for
// credit instead of sending past it).
func TestSmallFlowControlWindowsStillUpload(t *testing.T) {
	e := startEnv(t, echoHandler, func(c *Config) { c.StreamWindow, c.ConnWindow = 16<<10, 32<<10 })
	uploadByteExact(t, e)
}

// uploadByteExact posts 2 MiB and checks the handler saw every byte.
func uploadByteExact(t *testing.T, e *env) {
	t.Helper()
	c, _ := e.client(t)
	up := bytes.Repeat([]byte("upload-"), 2<<20/7)
	resp, err := c.Post(e.url("/upload"), "application/octet-stream", bytes.NewReader(up))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("%x %d", sha256.Sum256(up), len(up)); string(got) != want {
		t.Fatalf("upload: got %q, want %q", got, want)
	}
}
