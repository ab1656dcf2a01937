package proxy

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
)

// BenchmarkServeHit is the handler's share of a cache hit (no network):
// a 30 KB page, identity and gzip.
func BenchmarkServeHit(b *testing.B) {
	benchmarkHit(b, AccessLog{})
}

// BenchmarkServeHitWithAccessLog is BenchmarkServeHit with a combined
// access log in a file: the line's formatting and hand-over on the
// request goroutine, and the writer's goroutine writing the file.
func BenchmarkServeHitWithAccessLog(b *testing.B) {
	benchmarkHit(b, AccessLog{Path: filepath.Join(b.TempDir(), "access.log"), Format: accesslog.Combined})
}

func benchmarkHit(b *testing.B, log AccessLog) {
	t := &testing.T{}
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-LiteSpeed-Tag", "a,b")
		w.Write([]byte(strings.Repeat("<p>hello world</p>", 30720/18)))
	})
	defer o.Close()
	cfg := lscacheConfig(o.URL) // the LSCache protocol on, as sites have it by default
	cfg.Default.AccessLog = log
	p, base := startProxy(t, cfg)
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

// BenchmarkServeESIHit is the handler's share of an ESI page hit: a 30 KB
// page with 3 includes (2 public, 1 private, all cached), assembled per
// request, next to the same page without includes.
func BenchmarkServeESIHit(b *testing.B) {
	t := &testing.T{}
	filler := strings.Repeat("<p>hello world</p>", 30720/18/4)
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/esi":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=600,esi=on")
			w.Write([]byte(filler + `<esi:include src="/f1"/>` + filler + `<esi:include src="/f2"/>` + filler +
				`<esi:include src="/p" cache-control="private"/>` + filler))
		case "/plain":
			w.Header().Set("Cache-Control", "max-age=600")
			w.Write([]byte(filler + filler + filler + filler))
		case "/p":
			w.Header().Set("X-LiteSpeed-Cache-Control", "private,max-age=600")
			w.Write([]byte("<b>hi user</b>"))
		default:
			w.Header().Set("Cache-Control", "max-age=600")
			w.Write([]byte("<nav>fragment</nav>"))
		}
	})
	defer o.Close()
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	p, base := startProxy(t, cfg)
	for _, path := range []string{"/plain", "/esi"} {
		b.Run(path, func(b *testing.B) {
			var req fasthttp.Request
			req.SetRequestURI(path)
			req.Header.SetHost(strings.TrimPrefix(base, "http://"))
			req.Header.Set("Cookie", "session=abc")
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
			for range 3 { // fill the page and its fragments
				ctx.Response.Reset()
				p.ServeFastHTTP(&ctx)
			}
			benchmarkHits(b, p, &ctx)
		})
	}
}

// BenchmarkGzipAssembled is what compressing an assembled 30 KB page costs
// per hit (ESI pages differ per request, so they cannot be compressed once).
func BenchmarkGzipAssembled(b *testing.B) {
	body := []byte(strings.Repeat("<p>hello world, some page text here</p>\n", 30720/40))
	var dst []byte
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		dst = fasthttp.AppendGzipBytesLevel(dst[:0], body, fasthttp.CompressBestSpeed)
	}
}
