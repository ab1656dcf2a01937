package waf

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkInspect is the CPU one inspection takes with the CRS at
// paranoia 1 (and the wordpress exclusions): what a cache miss, a pass
// or a POST pays, and a fresh hit does not.
func BenchmarkInspect(b *testing.B) {
	s, err := NewLibrary().Get(Rules{Exclusions: []string{"wordpress"}})
	if err != nil {
		b.Fatal(err)
	}
	form := "name=Jane+Doe&email=jane%40example.com&comment=" + url.QueryEscape(strings.Repeat("It's a lovely day, isn't it? ", 70))
	form = form[:2048]
	for _, tt := range []struct {
		name, method, uri, ctype, body string
	}{
		{"get", "GET", "/page1k.html", "", ""},
		{"get benign query", "GET", "/page1k.html?s=hello+world&p=2", "", ""},
		{"post 2 KiB form", "POST", "/ok.php", "application/x-www-form-urlencoded", form},
		{"get sqli", "GET", "/page1k.html?id=1%27+OR+%271%27%3D%271", "", ""},
	} {
		b.Run(tt.name, func(b *testing.B) {
			var req fasthttp.Request
			req.Header.SetMethod(tt.method)
			req.SetRequestURI(tt.uri)
			req.Header.SetHost("shop.example")
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0")
			req.Header.Set("Accept", "text/html,application/xhtml+xml")
			req.Header.Set("Accept-Language", "en-US,en;q=0.5")
			req.Header.Set("Cookie", "_ga=GA1.2.3; theme=dark")
			if tt.body != "" {
				req.Header.SetContentType(tt.ctype)
				req.SetBodyString(tt.body)
			}
			in := Request{Req: &req, Client: netip.MustParseAddr("192.0.2.1"), ClientPort: 50000,
				Server: netip.MustParseAddrPort("127.0.0.1:80"), Body: req.Body()}
			b.ReportAllocs()
			for b.Loop() {
				tx, _ := s.Inspect(&in)
				tx.Close()
			}
		})
	}
}
