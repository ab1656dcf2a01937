package docroot

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
)

// BenchmarkServeHtaccess is the docroot's side of a request the cache
// passes or misses, with WordPress's and the LiteSpeed Cache plugin's
// .htaccess and without (front_controller): a PHP hello world (PHP an
// instant fake, so only the handler's work is measured) and a static
// file. "on-evaluated" runs the rules for every request (no key, as a
// coalesced fill does); "on" is a client's request, whose key lets the
// tree's memo answer a repeat.
//
//	go test -run=NONE -bench=ServeHtaccess -benchmem ./proxy/docroot/
func BenchmarkServeHtaccess(b *testing.B) {
	src, err := os.ReadFile("../htaccess/testdata/wordpress.htaccess")
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	for name, body := range map[string]string{
		".htaccess": string(src), "index.php": "<?php", "hello.php": "<?php", "wp-content/style.css": "body{}",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	handler := func(htaccess bool) *Handler {
		cfg := Config{Root: root, FrontController: "/index.php"}
		if htaccess {
			cfg.FrontController, cfg.Htaccess = "", true
		}
		h, err := New(cfg, instantPHP{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	off, on := handler(false), handler(true)
	// "/" is the front page: its index is evaluated as its own path.
	for i, path := range []string{"/", "/hello.php", "/wp-content/style.css"} {
		for _, m := range []struct {
			name string
			h    *Handler
			key  uint64
		}{{"off", off, 0}, {"on-evaluated", on, 0}, {"on", on, 0x5eed}} {
			b.Run(path+"/htaccess="+m.name, func(b *testing.B) {
				req := &fasthttp.Request{}
				req.SetRequestURI(path)
				req.Header.SetHost("wp.test")
				req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0")
				req.Header.Set("Accept", "text/html")
				req.Header.Set("Cookie", "wordpress_logged_in_x=1")
				req.Header.Set("X-Forwarded-For", "127.0.0.1")
				req.Header.Set("X-Forwarded-Proto", "http")
				req.Header.Set(HeaderRemotePort, "40000")
				req.Header.Set(HeaderServerAddr, "127.0.0.1")
				resp := &fasthttp.Response{}
				serve := func() {
					resp.Reset()
					key := m.key // a key hashes one request
					if key != 0 {
						key += uint64(i)
					}
					if err := m.h.DoForKey(nil, key, req, resp); err != nil || resp.StatusCode() != 200 {
						b.Fatalf("%v %d", err, resp.StatusCode())
					}
				}
				serve()
				b.ReportAllocs()
				cpu := processCPU()
				b.ResetTimer()
				for b.Loop() {
					serve()
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU()-cpu)/1e3/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// instantPHP answers every script at once with a hello world.
type instantPHP struct{}

func (instantPHP) Begin(context.Context, []phppool.Param, io.Reader, io.Writer) (Output, error) {
	return &instantOutput{piece: []byte("Content-Type: text/html; charset=UTF-8\r\n\r\nHello, World!")}, nil
}

type instantOutput struct{ piece []byte }

func (o *instantOutput) Next() ([]byte, error) {
	if o.piece == nil {
		return nil, io.EOF
	}
	p := o.piece
	o.piece = nil
	return p, nil
}

func (o *instantOutput) Buffered() int { return 0 }
func (o *instantOutput) Close() error  { return nil }

// processCPU is the CPU time the test process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
