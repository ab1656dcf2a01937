package proxy

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkFragmentFill is what asking fragment fetches for a coding
// would cost: an ESI page hit whose 3 uncacheable 4 KB fragments are
// fetched from a loopback origin each time, the origin answering
// identity, or compressing as nginx would if asked (gzip_comp_level 1;
// brotli at fasthttp's default) and ramjet decoding. The origin runs in
// the same process, as it shares the host with ramjet.
func BenchmarkFragmentFill(b *testing.B) {
	frag := []byte(strings.Repeat(`<li><a href="/post/123">A recent post title</a> <span>3 comments</span></li>`+"\n", 4096/80))
	for _, coding := range []string{"identity", "gzip", "br"} {
		b.Run("origin="+coding, func(b *testing.B) {
			t := &testing.T{}
			o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/esi" {
					w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=600,esi=on")
					for i := range 3 {
						fmt.Fprintf(w, `<p>text</p><esi:include src="/f?n=%d"/>`, i)
					}
					return
				}
				w.Header().Set("Cache-Control", "no-store")
				switch coding {
				case "gzip":
					w.Header().Set("Content-Encoding", "gzip")
					w.Write(fasthttp.AppendGzipBytesLevel(nil, frag, fasthttp.CompressBestSpeed))
				case "br":
					w.Header().Set("Content-Encoding", "br")
					w.Write(fasthttp.AppendBrotliBytesLevel(nil, frag, fasthttp.CompressBrotliDefaultCompression))
				default:
					w.Write(frag)
				}
			})
			defer o.Close()
			cfg := testConfig(o.URL)
			cfg.Default.ESI = true
			p, base := startProxy(t, cfg)
			var req fasthttp.Request
			req.SetRequestURI("/esi")
			req.Header.SetHost(strings.TrimPrefix(base, "http://"))
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
			for range 2 {
				ctx.Response.Reset()
				p.ServeFastHTTP(&ctx)
			}
			lines := 3 * strings.Count(string(frag), "A recent post")
			if n := strings.Count(string(ctx.Response.Body()), "A recent post"); n != lines {
				b.Fatalf("assembled page has %d fragment lines, want %d", n, lines)
			}
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				p.ServeFastHTTP(&ctx)
			}
		})
	}
}
