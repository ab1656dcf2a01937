package policy

import (
	"testing"
	"time"
)

// wordpressPage is a typical cacheable WordPress response behind the
// LSCache plugin.
func wordpressPage() *Input {
	return &Input{
		Now:            testNow,
		Method:         "GET",
		Status:         200,
		LSCacheControl: []byte("public,max-age=604800,esi=on"),
		CacheControl:   []byte("no-cache, must-revalidate, max-age=0"),
		Expires:        []byte("Wed, 11 Jan 1984 05:00:00 GMT"),
		Date:           []byte("Mon, 10 Mar 2025 12:00:00 GMT"),
		Vary:           []byte("Accept-Encoding, Cookie"),
		LSVary:         []byte("cookie=wp-postpass_0123456789abcdef"),
		TagHeaders: [][]byte{
			[]byte("368_HTTP.200,368_front,368_URL.10e89d8a0b1c2d3e,368_Po.6605,368_PGS,368_"),
		},
		DefaultTTL: time.Hour,
		Grace:      time.Minute,
	}
}

// plainRefusal is a response refused after parsing every header.
func plainRefusal() *Input {
	return &Input{
		Now:          testNow,
		Method:       "GET",
		Status:       200,
		CacheControl: []byte("public, max-age=600"),
		Expires:      []byte("Mon, 10 Mar 2025 13:00:00 GMT"),
		Date:         []byte("Mon, 10 Mar 2025 12:00:00 GMT"),
		SetCookie:    true,
	}
}

func BenchmarkDecide(b *testing.B) {
	for _, bc := range []struct {
		name string
		in   *Input
	}{
		{"wordpress-page", wordpressPage()},
		{"refused", plainRefusal()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Decide(bc.in)
			}
		})
	}
}

func BenchmarkParseHTTPDate(b *testing.B) {
	date := []byte("Sun, 06 Nov 1994 08:49:37 GMT")
	b.ReportAllocs()
	for b.Loop() {
		ParseHTTPDate(date)
	}
}
