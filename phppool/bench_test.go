package phppool

import (
	"context"
	"io"
	"net/http"
	"testing"
)

func BenchmarkRoundTrip(b *testing.B) {
	ln := startFake(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello world")
	}))
	c := dialFake(b, ln)
	ps := cgiParams("GET", "/", -1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, ps, nil, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
