//go:build !race

package h2

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// A request answered through Config.Inline allocates only while its
// HEADERS are decoded (x/net's MetaHeadersFrame, its fields and the
// emit closures): the stream, its RequestCtx and the response's HPACK
// strings are reused. Client included (it allocates nothing).
func TestInlineHitAllocs(t *testing.T) {
	hit := func(ctx *fasthttp.RequestCtx) bool { page725Handler(ctx); return true }
	ic := newInlineClient(t, pipeServer(t, Config{Inline: hit}, page725Handler))
	ic.get()
	n := testing.AllocsPerRun(1000, ic.get)
	t.Logf("%.1f allocations per inline hit", n)
	if n > 11 {
		t.Fatalf("inline hit allocates %.1f times, want at most 11", n)
	}
}
