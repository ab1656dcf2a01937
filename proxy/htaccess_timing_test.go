package proxy

import (
	"testing"
)

// BenchmarkHtaccess measures what .htaccess costs a request, side by side
// with the same site without one (front_controller doing WordPress's
// rewrite instead): WordPress's and the LiteSpeed Cache plugin's rules on
// a cached static file, a cached permalink, and an uncached PHP hello
// world (a logged-in cookie passes it to php-cgi).
//
//	go test -run=NONE -bench=Htaccess -benchmem ./proxy/
func BenchmarkHtaccess(b *testing.B) {
	for _, mode := range []struct {
		name string
		on   bool
	}{{"off", false}, {"on", true}} {
		site := wordpressSite(b, mode.on)
		site.BypassCookies = []string{"wordpress_logged_in_*"}
		p := newTestProxy(b, docrootConfig(site), nil)
		for _, tt := range []struct{ name, path, cookie string }{
			{"static-hit", "/wp-content/style.css", ""},
			{"permalink-hit", "/hello-world/", ""},
			{"php-uncached", "/hello.php", "wordpress_logged_in_x=1"},
		} {
			b.Run(tt.name+"/htaccess="+mode.name, func(b *testing.B) {
				ctx := hitCtx(tt.path, desktopAgent)
				if tt.cookie != "" {
					ctx.Request.Header.Set("Cookie", tt.cookie)
				}
				p.ServeFastHTTP(ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("%s: status %d", tt.path, ctx.Response.StatusCode())
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					ctx.Response.Reset()
					p.ServeFastHTTP(ctx)
				}
			})
		}
	}
}
