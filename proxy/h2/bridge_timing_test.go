package h2

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/valyala/fasthttp"
)

var small = []byte("<html><body>a small cached page</body></html>\n")

func smallPage(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Cache-Status", "ramjet; hit")
	ctx.Response.Header.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(small)
}

// BenchmarkSmallResponse: the same handler over TLS, HTTP/1.1 against
// HTTP/2, with Go's clients (client cost included).
func BenchmarkSmallResponse(b *testing.B) {
	env := startTLS(b, smallPage, nil)
	for _, proto := range []string{"h1", "h2"} {
		b.Run(proto, func(b *testing.B) {
			c := env.h1Client(b)
			if proto == "h2" {
				c = env.h2Client(b)
			}
			url := env.url("/")
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		})
	}
}

// BenchmarkBridge is the bridge alone: net/http request in, fasthttp
// handler, net/http response out, no network.
func BenchmarkBridge(b *testing.B) {
	srv, err := NewServer(Config{Addr: "127.0.0.1:0"}, smallPage, testLog())
	if err != nil {
		b.Fatal(err)
	}
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	br := newConnBridge(srv, c1)
	req := httptest.NewRequest(http.MethodGet, "https://example.com/page?x=1", nil)
	req.Header.Set("Accept-Encoding", "gzip, br")
	req.Header.Set("User-Agent", "bench")
	b.ReportAllocs()
	for b.Loop() {
		w := discardWriter{h: make(http.Header, 4)}
		br.ServeHTTP(w, req)
	}
}

type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header         { return w.h }
func (w discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w discardWriter) WriteHeader(int)             {}
