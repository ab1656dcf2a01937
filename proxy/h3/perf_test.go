package h3

import (
	"io"
	"net/http"
	"testing"
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
