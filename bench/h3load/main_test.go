package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/certs/certtest"
	"github.com/ramjet-proxy/ramjet/proxy/h3"
)

func TestH2loadCommandLineParses(t *testing.T) {
	c, err := parseFlags([]string{"-t1", "-c100", "-n100000", "-m10", "--tls13-ciphers=TLS_AES_128_GCM_SHA256", "https://127.0.0.1:8443/p"})
	if err != nil {
		t.Fatal(err)
	}
	if c.conns != 100 || c.requests != 100000 || c.streams != 10 || c.ciphers != "TLS_AES_128_GCM_SHA256" {
		t.Fatalf("parsed %+v", c)
	}
	if got := splitShort([]string{"-c1000", "-hold", "5s", "-k"}); !slices.Equal(got, []string{"-c", "1000", "-hold", "5s", "-k"}) {
		t.Fatalf("splitShort: %q", got)
	}
}

func TestOnlyLoopbackTargets(t *testing.T) {
	for _, u := range []string{"https://10.0.0.1/", "https://example.com/", "http://127.0.0.1/"} {
		if _, err := parseFlags([]string{u}); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

// TestOwnRequestsReadStatusAndBody: h3load's own HTTP/3 requests (the
// load mode) against ramjet's HTTP/3 server on loopback count the
// status and every DATA byte, over several streams of one connection.
func TestOwnRequestsReadStatusAndBody(t *testing.T) {
	body := bytes.Repeat([]byte("y"), 30000)
	addr := startH3(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) != "/page" {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		ctx.Response.Header.Set("Cache-Status", "ramjet; hit")
		ctx.SetBody(body)
	})
	for _, tc := range []struct {
		path   string
		status int
		bytes  int64
	}{{"/page", 200, 30000}, {"/missing", 404, -1}} {
		c, err := parseFlags([]string{"-timeout", "20s", "https://" + addr + tc.path})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		rc, err := dialRaw(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.close()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				g := newGetter(rc)
				for range 5 {
					status, n, err := g.do(ctx)
					if err != nil || status != tc.status || tc.bytes >= 0 && n != tc.bytes {
						t.Errorf("GET %s: %d, %d bytes, %v; want %d, %d bytes", tc.path, status, n, err, tc.status, tc.bytes)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

func startH3(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ca := certtest.NewCA(t, "h3load test CA")
	cf, kf := ca.Issue(t, "", "127.0.0.1").Write(t, t.TempDir(), "server")
	pair, err := tls.LoadX509KeyPair(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := h3.NewServer(h3.Config{Name: "h3", Addr: "127.0.0.1:0", TLS: &tls.Config{Certificates: []tls.Certificate{pair}}}, h, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() }) // the test's answers are what it checks
	return srv.Addr().String()
}
