package proxy

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// FuzzWarmRequestSelectsTheVariantItRefetches: the request the warm-up
// makes up for a variant selects that very variant again (its fields, as
// appendVariant keys them), so the refetched copy replaces the purged one
// and never lands in another visitor's variant.
func FuzzWarmRequestSelectsTheVariantItRefetches(f *testing.F) {
	f.Add("fr-CH, fr;q=0.9, en;q=0.8", "phone")
	f.Add("", "tablet")
	f.Add("EN", " a b ")
	f.Add("de;q=0.5,en", "")
	f.Fuzz(func(t *testing.T, lang, device string) {
		if strings.ContainsAny(lang+device, "\x00\r\n") {
			t.Skip("not a field value")
		}
		vary := cache.VarySpec{Headers: []string{"accept-language", "x-device"}, Cookies: []string{"_lscache_vary"}}
		var visitor fasthttp.RequestHeader
		visitor.Set("Accept-Language", lang)
		visitor.Set("X-Device", device)
		variant := string(appendVariant(nil, &visitor, &vary))
		if !plainRequest(&vary, variant) {
			t.Fatalf("variant %q of a request without cookies is not plain", variant)
		}
		req := madeUpRequest(warmCandidate{key: "https://a.test/p?q=1", vary: vary, variant: variant}, "a.test")
		defer fasthttp.ReleaseRequest(req)
		if got := string(appendVariant(nil, &req.Header, &vary)); got != variant {
			t.Fatalf("the warm-up's request selects %q, the variant it refetches is %q", got, variant)
		}
		if len(req.Header.Peek("Cookie")) != 0 || len(req.Header.Peek("Authorization")) != 0 {
			t.Fatalf("the warm-up's request carries credentials: %q", req.Header.String())
		}
	})
}
