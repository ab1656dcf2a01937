//go:build !race

package proxy

import (
	"strings"
	"testing"
)

// TestServeHitDoesNotAllocate: the inline hit path allocates nothing
// either.
func TestServeHitDoesNotAllocate(t *testing.T) {
	o := inlineOrigin(t)
	p, base := startProxy(t, testConfig(o.URL))
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
	if n := testing.AllocsPerRun(200, serve); n != 0 {
		t.Fatalf("ServeHit allocates %v times, want 0", n)
	}
}
