package h2

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/certs"
	"github.com/ramjet-proxy/ramjet/proxy/certs/certtest"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"
)

func testLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// tlsEnv is a server on 127.0.0.1 with a certificate from a test CA.
type tlsEnv struct {
	ca    *certtest.CA
	srv   *Server
	addr  string
	certF string // PEM of the CA, for curl and h2load
}

func startTLS(t testing.TB, h fasthttp.RequestHandler, mod func(*Config)) *tlsEnv {
	t.Helper()
	ca := certtest.NewCA(t, "ramjet h2 test CA")
	dir := t.TempDir()
	c, k := ca.Issue(t, "", "localhost", "127.0.0.1").Write(t, dir, "server")
	store, err := certs.New(certs.Config{Default: certs.Pair{CertFile: c, KeyFile: k}, DisableOCSP: true}, testLog())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "tls", Addr: "127.0.0.1:0", TLS: store.TLSConfig(), ReadTimeout: 5 * time.Second, IdleTimeout: 10 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	srv := start(t, cfg, h)
	caFile := dir + "/ca.pem"
	writeFile(t, caFile, ca.PEM)
	return &tlsEnv{ca: ca, srv: srv, addr: srv.Addr().String(), certF: caFile}
}

func start(t testing.TB, cfg Config, h fasthttp.RequestHandler) *Server {
	t.Helper()
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
	return srv
}

func (e *tlsEnv) url(path string) string { return "https://" + e.addr + path }

func (e *tlsEnv) tlsConfig(protos ...string) *tls.Config {
	return &tls.Config{RootCAs: e.ca.Pool(), ServerName: "localhost", NextProtos: protos}
}

// h2Client speaks HTTP/2 only, over one connection per address.
func (e *tlsEnv) h2Client(t testing.TB) *http.Client {
	t.Helper()
	tr := &http2.Transport{TLSClientConfig: e.tlsConfig("h2")}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// h1Client speaks HTTP/1.1 only.
func (e *tlsEnv) h1Client(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{
		TLSClientConfig: e.tlsConfig("http/1.1"),
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// h2cClient speaks HTTP/2 with prior knowledge over plain TCP.
func h2cClient(t testing.TB) *http.Client {
	t.Helper()
	tr := &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func plainClient(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// echo is the handler under test: it reports what it was told about the
// request in headers and answers with a body that depends on it.
func echo(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	switch string(ctx.Path()) {
	case "/sleep":
		time.Sleep(200 * time.Millisecond) // the work being measured
	case "/body":
		n, err := io.Copy(io.Discard, bodyReader(ctx))
		if err != nil {
			ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			return
		}
		h.Set("X-Body-Length", strconv.FormatInt(n, 10))
	case "/big":
		ctx.SetBody(bigBody)
	case "/nocontent":
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	case "/proto":
		tr := streamctx.TransportOf(ctx)
		fmt.Fprintf(ctx, "proto=%q behind=%v terminator=%v", tr.Protocol().Version(), tr.BehindTLS(), tr.FromTerminator())
		return
	}
	h.Set("X-Method", string(ctx.Method()))
	h.Set("X-URI", string(ctx.RequestURI()))
	h.Set("X-Host", string(ctx.Host()))
	h.Set("X-TLS", strconv.FormatBool(ctx.IsTLS()))
	h.Set("X-Remote-IP", ctx.RemoteIP().String())
	h.Set("X-Cookie", string(ctx.Request.Header.Peek("Cookie")))
	h.Set("X-Req", string(ctx.Request.Header.Peek("X-Req")))
	h.Set("Cache-Status", "ramjet; hit")
	h.Set("Cache-Control", "max-age=60")
	h.Add("Set-Cookie", "a=1; Path=/")
	h.Add("Set-Cookie", "b=2; Path=/")
	h.SetContentType("text/plain; charset=utf-8")
	if len(ctx.Response.Body()) == 0 {
		ctx.SetBodyString("hello " + string(ctx.RequestURI()) + "\n")
	}
}

// bodyReader is the request body as a stream whichever way it came.
func bodyReader(ctx *fasthttp.RequestCtx) io.Reader {
	if ctx.Request.IsBodyStream() {
		return ctx.RequestBodyStream()
	}
	return strings.NewReader(string(ctx.Request.Body()))
}

var bigBody = []byte(strings.Repeat("0123456789abcdef", 2<<20/16))

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func get(t testing.TB, c *http.Client, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
