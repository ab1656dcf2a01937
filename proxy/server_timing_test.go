package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// BenchmarkKeepAliveRequests: keep-alive requests answered by a trivial
// handler through the listener, parking on and off: the cost parking
// adds to a connection that is never idle long enough to be parked.
//
//	go test -run=NONE -bench=KeepAliveRequests -benchmem -count=6 ./proxy/
func BenchmarkKeepAliveRequests(b *testing.B) {
	for _, bc := range []struct {
		name string
		off  bool
	}{{"parking", false}, {"no-parking", true}} {
		b.Run(bc.name, func(b *testing.B) {
			body := make([]byte, 725)
			s := NewServer(ServerConfig{Name: "bench", Addr: "127.0.0.1:0", IdleTimeout: time.Minute,
				HeaderTimeout: 10 * time.Second, NoParking: bc.off}, func(ctx *fasthttp.RequestCtx) {
				ctx.SetBody(body)
			}, discardLog)
			if err := s.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer s.Shutdown(context.Background())
			const clients = 8
			req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			var wg sync.WaitGroup
			per := b.N/clients + 1
			b.ReportAllocs()
			b.ResetTimer()
			for range clients {
				c, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer c.Close()
					br := bufio.NewReader(c)
					for range per {
						if _, err := c.Write(req); err != nil {
							b.Error(err)
							return
						}
						if err := skipResponse(br, len(body)); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// skipResponse reads one response of a known body length.
func skipResponse(br *bufio.Reader, n int) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) == 2 {
			break
		}
	}
	_, err := br.Discard(n)
	if err == nil {
		return nil
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
