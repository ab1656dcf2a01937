package htaccess

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkEvalWordPress: one evaluation of WordPress's and the LiteSpeed
// Cache plugin's .htaccess: the lookup's (OneRound), as the proxy runs it
// before the cache, and the docroot's (every round) for what it serves.
func BenchmarkEvalWordPress(b *testing.B) {
	tr, _ := wordpressTree(&testing.T{}, map[string]string{"hello.php": "<?php"})
	for _, tt := range []struct{ name, path, ua string }{
		{"permalink", "/hello-world/", "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"},
		{"static", "/wp-content/style.css", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Mobile Safari/537.36"},
		{"script", "/hello.php", "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"},
	} {
		for _, one := range []bool{true, false} {
			name := tt.name + "/lookup"
			if !one {
				name = tt.name + "/serve"
			}
			b.Run(name, func(b *testing.B) {
				var h fasthttp.RequestHeader
				h.SetHost("example.com")
				h.Set("User-Agent", tt.ua)
				h.Set("Accept", "text/html,application/xhtml+xml")
				h.Set("Accept-Language", "en-US,en;q=0.5")
				h.Set("Accept-Encoding", "gzip, deflate, br")
				h.Set("Cookie", "a=1; b=2")
				r := request("GET "+tt.path, nil)
				r.Header, r.OneRound = &h, one
				o := &Outcome{}
				b.ReportAllocs()
				for b.Loop() {
					tr.Eval(r, o)
				}
			})
		}
	}
}
