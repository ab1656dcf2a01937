package proxy

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkServeHitBrowser is BenchmarkServeHit for a request as a
// browser sends it over HTTP/1.1: Connection: keep-alive, a dozen
// fields, analytics cookies (which identify nobody: still a hit), on a
// site with the LSCache protocol on.
func BenchmarkServeHitBrowser(b *testing.B) {
	t := &testing.T{}
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(strings.Repeat("<p>hello world</p>", 30720/18)))
	})
	defer o.Close()
	cfg := testConfig(o.URL)
	cfg.Default.LSCacheHeader = true
	p, base := startProxy(t, cfg)
	get(t, base+"/page")
	var req fasthttp.Request
	raw := "GET /page HTTP/1.1\r\nHost: " + strings.TrimPrefix(base, "http://") + "\r\n" +
		"Connection: keep-alive\r\n" +
		"Upgrade-Insecure-Requests: 1\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n" +
		"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
		"Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-User: ?1\r\nSec-Fetch-Dest: document\r\n" +
		"Referer: " + base + "/\r\n" +
		"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
		"Accept-Language: en-US,en;q=0.9\r\n" +
		"Cookie: _ga=GA1.1.123456789.1700000000; _gid=GA1.1.987654321.1700000000\r\n\r\n"
	if err := req.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		b.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
	p.ServeFastHTTP(&ctx)
	benchmarkHits(b, p, &ctx)
}

// benchmarkHits times serving ctx's request, a hit (checked on the answer
// ctx holds), allocations reported.
func benchmarkHits(b *testing.B, p *Proxy, ctx *fasthttp.RequestCtx) {
	if cs := string(ctx.Response.Header.Peek("Cache-Status")); cs != "ramjet; hit" {
		b.Fatalf("not a hit: %q", cs)
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		p.ServeFastHTTP(ctx)
	}
}
