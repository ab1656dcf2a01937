package origin

import (
	"io"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkPoolDo is a fill's round trip through the pool on a kept-alive
// connection: what a miss pays in this package.
func BenchmarkPoolDo(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte("<html>a small page</html>")
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetBody(body) }}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	defer srv.Shutdown()
	p := newTestPool(b, Config{Servers: []string{"http://" + ln.Addr().String()}})
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/page")
	req.Header.SetHost("example.com")
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Do(req, resp); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(resp.BodyStream(), buf[:len(body)]); err != nil {
			b.Fatal(err)
		}
		resp.CloseBodyStream()
	}
}
