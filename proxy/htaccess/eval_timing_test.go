package htaccess

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkEvalWordPress: one lookup's evaluation of WordPress's and the
// LiteSpeed Cache plugin's .htaccess, as the proxy runs it before the
// cache.
func BenchmarkEvalWordPress(b *testing.B) {
	tr, _ := wordpressTree(&testing.T{}, nil)
	for _, tt := range []struct{ name, path, ua string }{
		{"permalink", "/hello-world/", "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"},
		{"static", "/wp-content/style.css", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Mobile Safari/537.36"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			var h fasthttp.RequestHeader
			h.SetHost("example.com")
			h.Set("User-Agent", tt.ua)
			h.Set("Accept", "text/html,application/xhtml+xml")
			h.Set("Accept-Language", "en-US,en;q=0.5")
			h.Set("Accept-Encoding", "gzip, deflate, br")
			h.Set("Cookie", "a=1; b=2")
			r := request("GET "+tt.path, nil)
			r.Header, r.OneRound = &h, true
			o := &Outcome{}
			b.ReportAllocs()
			for b.Loop() {
				tr.Eval(r, o)
			}
		})
	}
}
