//go:build !race

package proxy

import (
	"strings"
	"testing"
)

// TestServeHitDoesNotAllocate: the inline hit path allocates nothing
// either, with or without an access log.
func TestServeHitDoesNotAllocate(t *testing.T) {
	eachLog(t, lscacheConfig(inlineOrigin(t).URL), inlineHitAllocs)
}

func inlineHitAllocs(t *testing.T, cfg Config) {
	p, base := startProxy(t, cfg)
	get(t, base+"/page")
	ctx := requestCtx("GET", strings.TrimPrefix(base, "http://"), "/page", false)
	ctx.Request.Header.Set("Accept-Encoding", "gzip")
	serve := func() {
		ctx.Response.Reset()
		if !p.ServeHit(ctx) {
			t.Fatal("not a hit")
		}
	}
	serve()
	if ls := peekLSCache(&ctx.Response.Header); ls != "hit" {
		t.Fatalf("inline hit: X-LiteSpeed-Cache %q", ls)
	}
	if n := testing.AllocsPerRun(200, serve); n != 0 {
		t.Fatalf("ServeHit allocates %v times, want 0", n)
	}
}
