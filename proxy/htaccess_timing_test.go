package proxy

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkHtaccess measures what .htaccess costs a request, side by side
// with the same site without one (front_controller doing WordPress's
// rewrite instead): WordPress's and the LiteSpeed Cache plugin's rules on
// a cached static file, a cached permalink, and an uncached PHP hello
// world (a logged-in cookie passes it to php-cgi; without one, the
// cache fills from it each time and stores nothing). Each request runs
// with the file and without, one after the other (the machine's load
// drifts); cpu-µs/op is the process's CPU per request (the PHP workers'
// is not in it), what the rules cost when the cores are busy.
//
//	go test -run=NONE -bench=Htaccess -benchmem ./proxy/
func BenchmarkHtaccess(b *testing.B) {
	type mode struct {
		name string
		p    *Proxy
	}
	var modes []mode
	for _, m := range []struct {
		name string
		on   bool
	}{{"off", false}, {"on", true}} {
		site := wordpressSite(b, m.on)
		site.BypassCookies = []string{"wordpress_logged_in_*"}
		modes = append(modes, mode{m.name, newTestProxy(b, docrootConfig(site), nil)})
	}
	for _, tt := range []struct{ name, path, cookie string }{
		{"static-hit", "/wp-content/style.css", ""},
		{"permalink-hit", "/hello-world/", ""},
		{"php-uncached", "/hello.php", "wordpress_logged_in_x=1"},
		{"php-uncacheable", "/hello.php", ""}, // a fill each time: the answer says nothing of caching
	} {
		for _, m := range modes {
			b.Run(tt.name+"/htaccess="+m.name, func(b *testing.B) {
				ctx := hitCtx(tt.path, desktopAgent)
				if tt.cookie != "" {
					ctx.Request.Header.Set("Cookie", tt.cookie)
				}
				m.p.ServeFastHTTP(ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("%s: status %d", tt.path, ctx.Response.StatusCode())
				}
				b.ReportAllocs()
				cpu := processCPU()
				b.ResetTimer()
				for b.Loop() {
					ctx.Response.Reset()
					m.p.ServeFastHTTP(ctx)
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU()-cpu)/1e3/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// processCPU is the CPU time the test process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
