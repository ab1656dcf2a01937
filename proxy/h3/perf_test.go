package h3

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkHitOverQUIC is a 725 B answer over a real QUIC connection on
// loopback, quic-go's HTTP/3 client included: allocations and time are
// the whole exchange's, both ends (TestStreamLayerAllocatesNothing has
// this package's share alone).
func BenchmarkHitOverQUIC(b *testing.B) {
	e := startEnv(b, page725, nil)
	c, _ := e.client(b)
	u := e.url("/page")
	get := func() {
		resp, err := c.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatal(resp.Status)
		}
	}
	get()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			get()
		}
	})
}

// page725 is a cached page's response as the proxy leaves it in ctx.
func page725(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentType("text/html; charset=utf-8")
	ctx.Response.Header.Set("Cache-Status", "ramjet; hit")
	ctx.Response.Header.Set("Age", "12")
	ctx.Response.Header.Set("ETag", `"5f2a-725"`)
	ctx.SetBody(body725)
}

var body725 = bytes.Repeat([]byte("x"), 725)
