//go:build !race

package proxy

import (
	"testing"
)

// TestHtaccessHitDoesNotAllocate: with WordPress's and the LiteSpeed
// Cache plugin's .htaccess, a hit (a permalink rewritten to index.php, a
// mobile variant, a static file) allocates nothing in any stage.
func TestHtaccessHitDoesNotAllocate(t *testing.T) {
	p := newTestProxy(t, docrootConfig(wordpressSite(t, true)), nil)
	for _, tt := range []struct{ name, path, ua string }{
		{"permalink", "/hello-world/", desktopAgent},
		{"mobile variant", "/hello-world/", mobileAgent},
		{"static file", "/wp-content/style.css", desktopAgent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := hitCtx(tt.path, tt.ua)
			ctx.Request.Header.Set("Cookie", "a=1; nocache_not=2") // parsed: the rules read them anyway
			serve := func() {
				ctx.Response.Reset()
				p.ServeFastHTTP(ctx)
			}
			serve()
			serve()
			if cs := string(ctx.Response.Header.Peek("Cache-Status")); cs != "ramjet; hit" {
				t.Fatalf("not a hit: %q (%d %q)", cs, ctx.Response.StatusCode(), ctx.Response.Body())
			}
			if n := testing.AllocsPerRun(200, serve); n != 0 {
				t.Fatalf("hit allocates %v times, want 0", n)
			}
		})
	}
}
