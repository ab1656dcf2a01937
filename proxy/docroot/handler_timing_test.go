package docroot

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
)

// BenchmarkPHP runs scripts through the handler and a real php-cgi pool
// of 4 workers: the docroot mode's miss path without HTTP parsing.
func BenchmarkPHP(b *testing.B) {
	if _, err := exec.LookPath("php-cgi"); err != nil {
		b.Skip("php-cgi not installed")
	}
	// Readable by the unprivileged user the workers run as under root.
	root, err := os.MkdirTemp("", "docroot-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(root)
	os.Chmod(root, 0o755)
	scripts := map[string]string{
		"hello.php":   "<?php echo 'Hello, World!';",
		"phpinfo.php": "<?php phpinfo();",
	}
	for name, src := range scripts {
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var pool *phppool.Pool
	pool, err = phppool.New(phppool.Config{Name: "bench", Min: 4, Max: 4, MaxRequests: 1 << 30}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	h, err := New(Config{Root: root}, benchPool{pool}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"hello.php", "phpinfo.php"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(2)
			b.RunParallel(func(pb *testing.PB) {
				req := &fasthttp.Request{}
				req.SetRequestURI("/" + name)
				req.Header.SetHost("localhost")
				req.Header.Set("X-Forwarded-For", "127.0.0.1")
				resp := &fasthttp.Response{}
				for pb.Next() {
					resp.Reset()
					if err := h.Do(req, resp); err != nil || resp.StatusCode() != 200 {
						b.Fatalf("%v %d", err, resp.StatusCode())
					}
					if resp.IsBodyStream() {
						io.Copy(io.Discard, resp.BodyStream())
						resp.CloseBodyStream()
					}
				}
			})
		})
	}
}

// benchPool is a pool as the handler's PHP (the proxy's adapter).
type benchPool struct{ *phppool.Pool }

func (p benchPool) Begin(ctx context.Context, ps []phppool.Param, stdin io.Reader, stderr io.Writer) (Output, error) {
	r, err := p.Pool.Begin(ctx, ps, stdin, stderr)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// BenchmarkResolve maps request paths to files: a script, a permalink for
// the front controller, and a static file, each with its symlink checks.
func BenchmarkResolve(b *testing.B) {
	root := tree(b)
	h, err := New(Config{Root: root, FrontController: "/index.php"}, &fakePHP{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{"/hello.php", "/2024/01/some-post/", "/style.css"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if t := h.resolve(path); t.kind != kindPHP && t.kind != kindStatic {
					b.Fatal(t.kind)
				}
			}
		})
	}
}

// BenchmarkLookup is resolve answered from the lookup cache.
func BenchmarkLookup(b *testing.B) {
	h, err := New(Config{Root: tree(b), FrontController: "/index.php"}, &fakePHP{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if t := h.lookup("/2024/01/some-post/"); t.kind != kindPHP {
			b.Fatal(t.kind)
		}
	}
}
