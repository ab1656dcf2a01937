package proxy

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/docroot"
)

// helloCGI is what php-cgi answers for hello.php.
const helloCGI = "Content-type: text/html; charset=UTF-8\r\n\r\nHello, World!"

// instantPHP answers every script at once with helloCGI, in one piece
// as a worker's first record would: the handler's share of a PHP request
// without the FastCGI exchange.
type instantPHP struct{}

func (instantPHP) Begin(context.Context, []phppool.Param, io.Reader, io.Writer) (docroot.Output, error) {
	return &instantOutput{}, nil
}

type instantOutput struct{ sent bool }

func (o *instantOutput) Next() ([]byte, error) {
	if o.sent {
		return nil, io.EOF
	}
	o.sent = true
	return []byte(helloCGI), nil
}

func (o *instantOutput) Buffered() int { return 0 }
func (o *instantOutput) Close() error  { return nil }

// BenchmarkServePHP is the handler's share of an uncacheable PHP request
// in docroot mode (no HTTP I/O): hello.php answered by instantPHP
// ("instant": ramjet's own work alone), and by a real php-cgi pool of 4
// workers ("php-cgi": the FastCGI exchange too; its CPU profile is
// ramjet's, PHP runs in other processes). Run:
//
//	go test -run=NONE -bench=ServePHP -benchmem -cpuprofile=cpu.out ./proxy/
func BenchmarkServePHP(b *testing.B) {
	dir := testbed.PublicDir(b)
	if err := os.WriteFile(filepath.Join(dir, "hello.php"), []byte("<?php echo 'Hello, World!';"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"instant", "php-cgi"} {
		b.Run(name, func(b *testing.B) {
			cfg := testConfig("http://127.0.0.1:1") // never asked
			site := Site{Cache: true, Docroot: &Docroot{Config: docroot.Config{Root: dir}}}
			if name == "php-cgi" {
				site.Docroot.PHP = &phppool.Config{Binary: testbed.PHPCGI(b), Min: 4, Max: 4, MaxRequests: 1 << 30}
			}
			cfg.Default = site
			t := &testing.T{}
			p := newTestProxy(t, cfg, nil)
			defer p.Close()
			if name == "instant" {
				for _, s := range p.gen.Load().router.sites() {
					h, err := docroot.New(s.Docroot.Config, instantPHP{}, nil)
					if err != nil {
						b.Fatal(err)
					}
					s.up = docrootUpstream{h}
				}
			}
			var req fasthttp.Request
			req.SetRequestURI("/hello.php")
			req.Header.SetHost("localhost")
			req.Header.Set("User-Agent", "wrk")
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
			ctx.Response.Reset()
			p.ServeFastHTTP(&ctx) // the first request learns hello.php is uncacheable
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				p.ServeFastHTTP(&ctx)
				if ctx.Response.StatusCode() != 200 || !strings.HasSuffix(string(ctx.Response.Body()), "Hello, World!") {
					b.Fatalf("%d %q", ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
		})
	}
}
