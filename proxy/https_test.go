package proxy

import (
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// tlsTestConn stands in for a TLS connection: fasthttp's ctx.IsTLS()
// only asks whether the connection can report a handshake.
type tlsTestConn struct{ net.Conn }

func (tlsTestConn) Handshake() error                     { return nil }
func (tlsTestConn) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }
func (tlsTestConn) RemoteAddr() net.Addr                 { return tlsTestRemote }
func (tlsTestConn) LocalAddr() net.Addr                  { return tlsTestLocal }

// The addresses are made once, as a socket's are: the hit path asks for
// the client's.
var (
	tlsTestRemote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
	tlsTestLocal  = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443}
)

// requestCtx is a ctx for one request as it arrived over TLS or not.
func requestCtx(method, host, uri string, overTLS bool) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	if overTLS {
		ctx.Init2(tlsTestConn{}, nil, false)
	} else {
		ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
	}
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.SetHost(host)
	return &ctx
}

func httpsTestProxy(t *testing.T, httpsPort int) *Proxy {
	t.Helper()
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/own-hsts" {
			w.Header().Set("Strict-Transport-Security", "max-age=5")
		}
		w.Header().Set("X-Proto", r.Header.Get("X-Forwarded-Proto"))
		w.Header().Set("Cache-Control", "max-age=600")
		w.Write([]byte("origin " + r.URL.Path))
	})
	cfg := testConfig(o.URL)
	cfg.HTTPSPort = httpsPort
	cfg.Sites = []Site{{Names: []string{"secure.test"}, Cache: true, HTTPSRedirect: true, HSTS: "max-age=600; includeSubDomains"}}
	p, _ := startProxy(t, cfg)
	return p
}

func TestHTTPSRedirectOnPlainRequests(t *testing.T) {
	tests := []struct {
		name, method, host, uri string
		port                    int
		tls                     bool
		status                  int
		location                string
	}{
		{name: "GET keeps path and query", method: "GET", host: "secure.test:8080", uri: "/a/b?x=1&y=2", port: 8443,
			status: 301, location: "https://secure.test:8443/a/b?x=1&y=2"},
		{name: "port 443 is left out", method: "HEAD", host: "secure.test", uri: "/", port: 443,
			status: 301, location: "https://secure.test/"},
		{name: "no TLS listener: port left out", method: "GET", host: "Secure.Test", uri: "/p", port: 0,
			status: 301, location: "https://secure.test/p"},
		{name: "POST keeps its method with 308", method: "POST", host: "secure.test", uri: "/form", port: 443,
			status: 308, location: "https://secure.test/form"},
		{name: "ACME challenge is served over HTTP", method: "GET", host: "secure.test", uri: "/.well-known/acme-challenge/tok", port: 443,
			status: 200},
		{name: "other hosts are not redirected", method: "GET", host: "plain.test", uri: "/", port: 443, status: 200},
		{name: "requests over TLS are not redirected", method: "GET", host: "secure.test", uri: "/", port: 443, tls: true, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := httpsTestProxy(t, tt.port)
			ctx := requestCtx(tt.method, tt.host, tt.uri, tt.tls)
			p.ServeFastHTTP(ctx)
			if got := ctx.Response.StatusCode(); got != tt.status {
				t.Fatalf("status %d, want %d", got, tt.status)
			}
			if got := string(ctx.Response.Header.Peek("Location")); got != tt.location {
				t.Fatalf("Location %q, want %q", got, tt.location)
			}
		})
	}
}

func TestHSTSOnlyOverTLS(t *testing.T) {
	p := httpsTestProxy(t, 443)
	tests := []struct {
		name, host, uri string
		tls             bool
		want            string
	}{
		{"miss over TLS", "secure.test", "/page", true, "max-age=600; includeSubDomains"},
		{"hit over TLS", "secure.test", "/page", true, "max-age=600; includeSubDomains"},
		{"hit of the application's own value", "secure.test", "/own-hsts", true, "max-age=5"},
		{"the application's own value wins", "secure.test", "/own-hsts", true, "max-age=5"},
		{"plain HTTP never gets it", "secure.test", "/.well-known/acme-challenge/x", false, ""},
		{"a site without hsts", "plain.test", "/page", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := requestCtx("GET", tt.host, tt.uri, tt.tls)
			p.ServeFastHTTP(ctx)
			if got := string(ctx.Response.Header.Peek("Strict-Transport-Security")); got != tt.want {
				t.Fatalf("Strict-Transport-Security %q, want %q (status %d, Cache-Status %s)", got, tt.want,
					ctx.Response.StatusCode(), ctx.Response.Header.Peek("Cache-Status"))
			}
			if tt.name == "hit over TLS" && string(ctx.Response.Header.Peek("Cache-Status")) != "ramjet; hit" {
				t.Fatalf("Cache-Status %s, want a hit", ctx.Response.Header.Peek("Cache-Status"))
			}
			if tt.tls && !strings.Contains(string(ctx.Response.Body()), "origin") {
				t.Fatalf("body %q", ctx.Response.Body())
			}
		})
	}
}

func TestForwardedProtoIsHTTPSOverTLS(t *testing.T) {
	p := httpsTestProxy(t, 443)
	for _, tt := range []struct {
		tls  bool
		want string
	}{{true, "https"}, {false, "http"}} {
		ctx := requestCtx("GET", "plain.test", "/proto?tls="+strconv.FormatBool(tt.tls), tt.tls)
		ctx.Request.Header.Set("X-Forwarded-Proto", "spoofed")
		p.ServeFastHTTP(ctx)
		if got := string(ctx.Response.Header.Peek("X-Proto")); got != tt.want {
			t.Errorf("tls=%v: origin saw X-Forwarded-Proto %q, want %q", tt.tls, got, tt.want)
		}
	}
}
