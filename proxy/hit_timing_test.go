package proxy

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkServeHit is the handler's share of a cache hit (no network):
// a 30 KB page, identity and gzip.
func BenchmarkServeHit(b *testing.B) {
	t := &testing.T{}
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-LiteSpeed-Tag", "a,b")
		w.Write([]byte(strings.Repeat("<p>hello world</p>", 30720/18)))
	})
	defer o.Close()
	p, base := startProxy(t, testConfig(o.URL))
	get(t, base+"/page")
	for _, ae := range []string{"", "gzip"} {
		b.Run("accept-encoding="+ae, func(b *testing.B) {
			var req fasthttp.Request
			req.SetRequestURI("/page")
			req.Header.SetHost(strings.TrimPrefix(base, "http://"))
			req.Header.Set("User-Agent", "wrk")
			if ae != "" {
				req.Header.Set("Accept-Encoding", ae)
			}
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				p.ServeFastHTTP(&ctx)
			}
		})
	}
}
