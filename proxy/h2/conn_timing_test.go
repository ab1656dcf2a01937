package h2

import (
	"io"
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
