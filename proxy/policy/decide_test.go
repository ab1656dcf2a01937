package policy

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2025, time.March, 10, 12, 0, 0, 0, time.UTC)

// input fills the fields a case leaves zero: GET, 200, testNow.
func input(in Input) *Input {
	if in.Method == "" {
		in.Method = "GET"
	}
	if in.Status == 0 {
		in.Status = 200
	}
	if in.Now.IsZero() {
		in.Now = testNow
	}
	return &in
}

func b(s string) []byte { return []byte(s) }

func TestDecideStoresOrRefuses(t *testing.T) {
	tests := []struct {
		name    string
		in      Input
		store   bool
		reason  string
		ttl     time.Duration
		private bool
	}{
		{name: "GET with max-age is stored", in: Input{CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "HEAD is a candidate", in: Input{Method: "HEAD", CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "POST is never stored", in: Input{Method: "POST", CacheControl: b("public, max-age=60")}, reason: "method"},
		{name: "206 is never stored", in: Input{Status: 206, CacheControl: b("max-age=60")}, reason: "status"},
		{name: "304 is never stored", in: Input{Status: 304, CacheControl: b("max-age=60")}, reason: "status"},
		{name: "500 is stored with explicit freshness", in: Input{Status: 500, CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "599 is stored with explicit freshness", in: Input{Status: 599, CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "500 without freshness ignores DefaultTTL", in: Input{Status: 500, DefaultTTL: time.Hour}, reason: "no-ttl"},
		{name: "no-cache with a validator is stored, revalidated on every use", in: Input{CacheControl: b("no-cache"), Validators: true}, store: true},
		{name: "no-cache without validators is not stored", in: Input{CacheControl: b("no-cache, max-age=60")}, reason: "no-cache"},
		{name: "101 is never stored", in: Input{Status: 101, CacheControl: b("max-age=60")}, reason: "status"},
		{name: "501 is stored with explicit freshness", in: Input{Status: 501, CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "302 is stored with explicit freshness", in: Input{Status: 302, CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "302 without freshness ignores DefaultTTL", in: Input{Status: 302, DefaultTTL: time.Hour}, reason: "no-ttl"},
		{name: "204 without freshness ignores DefaultTTL", in: Input{Status: 204, DefaultTTL: time.Hour}, reason: "no-ttl"},
		{name: "404 without freshness gets DefaultTTL", in: Input{Status: 404, DefaultTTL: time.Hour}, store: true, ttl: time.Hour},
		{name: "a targeted field beats Cache-Control", in: Input{Targeted: b("max-age=600"), CacheControl: b("no-store")}, store: true, ttl: 10 * time.Minute},
		{name: "a targeted field's private is refused", in: Input{Targeted: b("private"), CacheControl: b("public, max-age=60")}, reason: "private"},
		{name: "a targeted field's no-store is refused", in: Input{Targeted: b("no-store"), CacheControl: b("max-age=60")}, reason: "no-store"},
		{name: "a targeted field ignores Expires", in: Input{Targeted: b("public"), Expires: b(testNow.Add(time.Hour).Format(http.TimeFormat))}, reason: "no-ttl"},
		{name: "a huge targeted max-age is clamped to a year", in: Input{Targeted: b("max-age=99999999999999")}, store: true, ttl: 365 * 24 * time.Hour},
		{name: "the LSCache header beats a targeted field", in: Input{LSCacheControl: b("no-cache"), Targeted: b("max-age=60")}, reason: "no-cache"},
		{name: "heuristic freshness is off by default", in: Input{LastModified: b(testNow.Add(-10 * time.Hour).Format(http.TimeFormat))}, reason: "no-ttl"},
		{name: "heuristic freshness is 10 % of the Last-Modified age", in: Input{Heuristic: true, LastModified: b(testNow.Add(-10 * time.Hour).Format(http.TimeFormat))}, store: true, ttl: time.Hour},
		{name: "heuristic freshness is capped at a day", in: Input{Heuristic: true, LastModified: b(testNow.Add(-100 * 24 * time.Hour).Format(http.TimeFormat))}, store: true, ttl: 24 * time.Hour},
		{name: "heuristic freshness yields to explicit freshness", in: Input{Heuristic: true, CacheControl: b("max-age=60"), LastModified: b(testNow.Add(-10 * time.Hour).Format(http.TimeFormat))}, store: true, ttl: time.Minute},
		{name: "heuristic freshness not for 302", in: Input{Status: 302, Heuristic: true, LastModified: b(testNow.Add(-10 * time.Hour).Format(http.TimeFormat))}, reason: "no-ttl"},
		{name: "Expires with extra spaces is already expired", in: Input{Expires: b(testNow.Add(time.Hour).Format("Mon,  02 Jan 2006 15:04:05 GMT"))}, reason: "expired"},
		{name: "Expires in lower-case gmt is valid", in: Input{Expires: b(strings.Replace(testNow.Add(time.Hour).Format(http.TimeFormat), "GMT", "gmt", 1))}, store: true, ttl: time.Hour},
		{name: "Vary star is never stored", in: Input{Vary: b("Accept, *"), LSCacheControl: b("public, max-age=60")}, reason: "vary-star"},
		{name: "Set-Cookie never stored by default", in: Input{SetCookie: true, CacheControl: b("public, max-age=60")}, reason: "set-cookie"},
		{name: "Set-Cookie stored with CacheSetCookie", in: Input{SetCookie: true, CacheSetCookie: true, CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "Set-Cookie not stored under LS public either", in: Input{SetCookie: true, LSCacheControl: b("public, max-age=60")}, reason: "set-cookie"},

		{name: "Authorization refuses plain max-age", in: Input{Authorization: true, CacheControl: b("max-age=60")}, reason: "authorization"},
		{name: "Authorization allowed with public", in: Input{Authorization: true, CacheControl: b("public, max-age=60")}, store: true, ttl: time.Minute},
		{name: "Authorization allowed with s-maxage", in: Input{Authorization: true, CacheControl: b("s-maxage=60")}, store: true, ttl: time.Minute},
		{name: "Authorization allowed with must-revalidate", in: Input{Authorization: true, CacheControl: b("must-revalidate, max-age=60")}, store: true, ttl: time.Minute},
		{name: "Authorization refuses DefaultTTL", in: Input{Authorization: true, DefaultTTL: time.Hour}, reason: "authorization"},
		{name: "Authorization allowed with LS max-age (forces public)", in: Input{Authorization: true, LSCacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "Authorization with LS private stays private", in: Input{Authorization: true, LSCacheControl: b("private, max-age=60"), CacheControl: b("public")}, reason: "private", private: true, ttl: time.Minute},
		{name: "Authorization refuses LS without public", in: Input{Authorization: true, LSCacheControl: b("esi=on"), DefaultTTL: time.Hour}, reason: "authorization"},

		{name: "Cache-Control no-store", in: Input{CacheControl: b("no-store, max-age=60")}, reason: "no-store"},
		{name: "Cache-Control no-cache", in: Input{CacheControl: b("no-cache, max-age=60")}, reason: "no-cache"},
		{name: "Cache-Control private", in: Input{CacheControl: b("private, max-age=60")}, reason: "private"},
		{name: "qualified private counts as private", in: Input{CacheControl: b(`private="Set-Cookie, X-Foo", max-age=60`)}, reason: "private"},
		{name: "qualified no-cache counts as no-cache", in: Input{CacheControl: b(`no-cache="Set-Cookie", max-age=60`)}, reason: "no-cache"},
		{name: "quoted comma does not start a directive", in: Input{CacheControl: b(`foo="a, no-store", max-age=60`)}, store: true, ttl: time.Minute},
		{name: "no-store beats no-cache and private", in: Input{CacheControl: b("private, no-cache, no-store")}, reason: "no-store"},

		{name: "LS no-cache overrides Cache-Control max-age", in: Input{LSCacheControl: b("no-cache"), CacheControl: b("public, max-age=600")}, reason: "no-cache"},
		{name: "LS no-store", in: Input{LSCacheControl: b("no-store")}, reason: "no-store"},
		{name: "LS public max-age overrides Cache-Control no-store private", in: Input{LSCacheControl: b("public,max-age=120"), CacheControl: b("no-cache, must-revalidate, max-age=0, no-store, private")}, store: true, ttl: 2 * time.Minute},
		{name: "LS max-age overrides Surrogate-Control no-store", in: Input{LSCacheControl: b("max-age=120"), SurrogateControl: b("no-store")}, store: true, ttl: 2 * time.Minute},
		{name: "LS max-age clears an earlier no-cache", in: Input{LSCacheControl: b("no-cache, max-age=60")}, store: true, ttl: time.Minute},
		{name: "LS no-cache after max-age wins", in: Input{LSCacheControl: b("max-age=60, no-cache")}, reason: "no-cache"},
		{name: "LS private is Private and not stored, with a lifetime for the per-user cache", in: Input{LSCacheControl: b("private,max-age=1800")}, reason: "private", private: true, ttl: 30 * time.Minute},
		{name: "LS shared private is Private", in: Input{LSCacheControl: b("shared,private,no-vary,max-age=1800,esi=on")}, reason: "private", private: true, ttl: 30 * time.Minute},
		{name: "LS public after private clears it", in: Input{LSCacheControl: b("private, public, max-age=60")}, store: true, ttl: time.Minute},
		{name: "LS without max-age gets DefaultTTL for 200", in: Input{LSCacheControl: b("public"), CacheControl: b("max-age=60"), DefaultTTL: time.Hour}, store: true, ttl: time.Hour},
		{name: "LS without max-age stores only 200", in: Input{Status: 404, LSCacheControl: b("public"), DefaultTTL: time.Hour}, reason: "status"},
		{name: "LS without max-age ignores Cache-Control lifetime", in: Input{LSCacheControl: b("public"), CacheControl: b("max-age=60")}, reason: "no-ttl"},
		{name: "LS max-age stores 404", in: Input{Status: 404, LSCacheControl: b("public, max-age=3600")}, store: true, ttl: time.Hour},
		{name: "LS s-maxage beats max-age", in: Input{LSCacheControl: b("max-age=10, s-maxage=20")}, store: true, ttl: 20 * time.Second},
		{name: "LS max-age after s-maxage is ignored", in: Input{LSCacheControl: b("s-maxage=20, max-age=10")}, store: true, ttl: 20 * time.Second},
		{name: "LS later max-age overwrites earlier", in: Input{LSCacheControl: b("max-age=10, max-age=30")}, store: true, ttl: 30 * time.Second},
		{name: "LS max-age=0 is expired", in: Input{LSCacheControl: b("public, max-age=0")}, reason: "expired"},
		{name: "LS directives match by prefix and case", in: Input{LSCacheControl: b(" PUBLIC , Max-Age = \"90\" ")}, store: true, ttl: 90 * time.Second},
		{name: "blank LS header is absent", in: Input{LSCacheControl: b("  "), CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},

		{name: "Surrogate-Control max-age beats Cache-Control max-age", in: Input{SurrogateControl: b("max-age=300"), CacheControl: b("max-age=10")}, store: true, ttl: 5 * time.Minute},
		{name: "Surrogate-Control max-age overrides Cache-Control no-cache", in: Input{SurrogateControl: b("max-age=300"), CacheControl: b("no-cache")}, store: true, ttl: 5 * time.Minute},
		{name: "Surrogate-Control max-age does not override Cache-Control private", in: Input{SurrogateControl: b("max-age=300"), CacheControl: b("private")}, reason: "private"},
		{name: "Surrogate-Control no-store", in: Input{SurrogateControl: b("no-store"), CacheControl: b("max-age=60")}, reason: "no-store"},
		{name: "Surrogate-Control max-age targeted at ramjet wins", in: Input{SurrogateControl: b("max-age=60, max-age=300;ramjet")}, store: true, ttl: 5 * time.Minute},
		{name: "Surrogate-Control targeted at another device does not count", in: Input{SurrogateControl: b("max-age=300;other"), CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},
		{name: "Surrogate-Control no-store targeted at ramjet", in: Input{SurrogateControl: b("no-store;ramjet, max-age=300")}, reason: "no-store"},
		{name: "Surrogate-Control max-age overrides Cache-Control no-store", in: Input{SurrogateControl: b("max-age=300"), CacheControl: b("no-store")}, store: true, ttl: 5 * time.Minute},
		{name: "Surrogate-Control without max-age leaves Cache-Control in charge", in: Input{SurrogateControl: b(`content="ESI/1.0"`), CacheControl: b("max-age=60")}, store: true, ttl: time.Minute},

		{name: "s-maxage beats max-age", in: Input{CacheControl: b("max-age=10, s-maxage=20")}, store: true, ttl: 20 * time.Second},
		{name: "max-age=0 is expired", in: Input{CacheControl: b("max-age=0"), DefaultTTL: time.Hour}, reason: "expired"},
		{name: "quoted max-age is accepted", in: Input{CacheControl: b(`max-age="60"`)}, store: true, ttl: time.Minute},
		{name: "negative max-age is ignored", in: Input{CacheControl: b("max-age=-5"), DefaultTTL: time.Hour}, store: true, ttl: time.Hour},
		{name: "garbage max-age is ignored", in: Input{CacheControl: b("max-age=6x0")}, reason: "no-ttl"},
		{name: "first valid max-age counts", in: Input{CacheControl: b("max-age=x, max-age=30, max-age=90")}, store: true, ttl: 30 * time.Second},
		{name: "huge max-age clamps to a year", in: Input{CacheControl: b("max-age=99999999999999999999999")}, store: true, ttl: 365 * 24 * time.Hour},
		{name: "huge DefaultTTL clamps to a year", in: Input{DefaultTTL: 1 << 62}, store: true, ttl: 365 * 24 * time.Hour},

		{name: "Expires minus Date gives the lifetime", in: Input{Date: b("Mon, 10 Mar 2025 11:00:00 GMT"), Expires: b("Mon, 10 Mar 2025 11:02:00 GMT")}, store: true, ttl: 2 * time.Minute},
		{name: "Expires without Date counts from Now", in: Input{Expires: b("Mon, 10 Mar 2025 12:05:00 GMT")}, store: true, ttl: 5 * time.Minute},
		{name: "invalid Expires means expired", in: Input{Expires: b("0"), DefaultTTL: time.Hour}, reason: "expired"},
		{name: "Expires in the past is expired", in: Input{Expires: b("Wed, 11 Jan 1984 05:00:00 GMT")}, reason: "expired"},
		{name: "Expires before a far future Date does not overflow", in: Input{Date: b("Fri, 31 Dec 9999 23:59:59 GMT"), Expires: b("Mon, 01 Jan 0001 00:00:00 GMT"), Age: b("5")}, reason: "expired"},
		{name: "max-age beats Expires", in: Input{CacheControl: b("max-age=60"), Expires: b("0")}, store: true, ttl: time.Minute},

		{name: "Age is subtracted", in: Input{CacheControl: b("max-age=60"), Age: b("20")}, store: true, ttl: 40 * time.Second},
		{name: "Age at the lifetime is expired", in: Input{CacheControl: b("max-age=60"), Age: b("60")}, reason: "expired"},
		{name: "invalid Age is ignored", in: Input{CacheControl: b("max-age=60"), Age: b("-3")}, store: true, ttl: time.Minute},
		{name: "first of several Ages counts", in: Input{CacheControl: b("max-age=60"), Age: b("10, 50")}, store: true, ttl: 50 * time.Second},
		{name: "Age is subtracted from DefaultTTL", in: Input{DefaultTTL: time.Minute, Age: b("15")}, store: true, ttl: 45 * time.Second},
		{name: "no freshness and no DefaultTTL is no-ttl", in: Input{}, reason: "no-ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(input(tt.in))
			if d.Store != tt.store || d.Reason != tt.reason || d.TTL != tt.ttl || d.Private != tt.private {
				t.Errorf("got Store=%v Reason=%q TTL=%v Private=%v, want %v %q %v %v",
					d.Store, d.Reason, d.TTL, d.Private, tt.store, tt.reason, tt.ttl, tt.private)
			}
		})
	}
}

func TestDecideStaleWindows(t *testing.T) {
	const grace = 30 * time.Second
	tests := []struct {
		name     string
		in       Input
		swr, sie time.Duration
	}{
		{name: "Grace when the response gives none", in: Input{CacheControl: b("max-age=60")}, swr: grace, sie: grace},
		{name: "Cache-Control windows beat Grace", in: Input{CacheControl: b("max-age=60, stale-while-revalidate=5, stale-if-error=600")}, swr: 5 * time.Second, sie: 10 * time.Minute},
		{name: "explicit zero window beats Grace", in: Input{CacheControl: b("max-age=60, stale-while-revalidate=0")}, swr: 0, sie: grace},
		{name: "must-revalidate allows no stale", in: Input{CacheControl: b("max-age=60, must-revalidate, stale-while-revalidate=5")}, swr: 0, sie: 0},
		{name: "proxy-revalidate allows no stale", in: Input{CacheControl: b("max-age=60, proxy-revalidate, stale-if-error=5")}, swr: 0, sie: 0},
		{name: "s-maxage drops Grace", in: Input{CacheControl: b("s-maxage=60")}, swr: 0, sie: 0},
		{name: "s-maxage carries proxy-revalidate: no stale at all", in: Input{CacheControl: b("s-maxage=60, stale-while-revalidate=10")}, swr: 0, sie: 0},
		{name: "LS max-stale is the SWR window", in: Input{LSCacheControl: b("public, max-age=60, max-stale=120")}, swr: 2 * time.Minute, sie: grace},
		{name: "LS header ignores Cache-Control must-revalidate", in: Input{LSCacheControl: b("public, max-age=60"), CacheControl: b("max-age=0, must-revalidate")}, swr: grace, sie: grace},
		{name: "Surrogate-Control +M is the SIE window", in: Input{SurrogateControl: b("max-age=60+300")}, swr: grace, sie: 5 * time.Minute},
		{name: "negative Grace counts as none", in: Input{CacheControl: b("max-age=60"), Grace: -time.Second}, swr: 0, sie: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(tt.in)
			if in.Grace == 0 {
				in.Grace = grace
			}
			d := Decide(in)
			if !d.Store || d.StaleWhileRevalidate != tt.swr || d.StaleIfError != tt.sie {
				t.Errorf("got Store=%v (%q) SWR=%v SIE=%v, want SWR=%v SIE=%v",
					d.Store, d.Reason, d.StaleWhileRevalidate, d.StaleIfError, tt.swr, tt.sie)
			}
		})
	}
}

func TestDecideListsAndFlags(t *testing.T) {
	stored := b("public, max-age=60")
	tests := []struct {
		name string
		in   Input
		want Decision
	}{
		{
			name: "tags from all headers deduped in order",
			in: Input{LSCacheControl: stored, TagHeaders: [][]byte{
				b("368_HTTP.200,368_product, 368_Po.6605,368_"), b("a b  368_product"), b(""), b(" , "), b("a,c"),
			}},
			want: Decision{Tags: []string{"368_HTTP.200", "368_product", "368_Po.6605", "368_", "a", "b", "c"}},
		},
		{
			name: "vary headers lower-cased without accept-encoding",
			in:   Input{LSCacheControl: stored, Vary: b("Accept-Encoding, Accept-Language,cookie, ACCEPT-language, ,X-Device")},
			want: Decision{VaryHeaders: []string{"accept-language", "cookie", "x-device"}},
		},
		{
			name: "only accept-encoding means no vary headers",
			in:   Input{LSCacheControl: stored, Vary: b("Accept-Encoding")},
			want: Decision{},
		},
		{
			name: "vary cookies keep case and drop other items",
			in:   Input{LSCacheControl: stored, LSVary: b("cookie=wp-postpass_abc, value=x, Cookie= Woo_Cart ,cookie=wp-postpass_abc,cookie=")},
			want: Decision{VaryCookies: []string{"wp-postpass_abc", "Woo_Cart"}},
		},
		{
			name: "LS esi=on and no-vary",
			in:   Input{LSCacheControl: b("public,no-vary,max-age=60,esi=on")},
			want: Decision{ESI: true, NoVary: true},
		},
		{
			name: "LS esi=off after esi=on",
			in:   Input{LSCacheControl: b("public,max-age=60,esi=on,esi=off")},
			want: Decision{},
		},
		{
			name: "Surrogate-Control content ESI/1.0",
			in:   Input{SurrogateControl: b(`content="ESI/1.0 ESI-INV/1.0"`), CacheControl: b("max-age=60")},
			want: Decision{ESI: true},
		},
		{
			name: "Surrogate-Control content ESI counts under LS",
			in:   Input{LSCacheControl: stored, SurrogateControl: b(`content="ESI/1.0"`)},
			want: Decision{ESI: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(input(tt.in))
			if !d.Store {
				t.Fatalf("not stored: %q", d.Reason)
			}
			if !slices.Equal(d.Tags, tt.want.Tags) || !slices.Equal(d.VaryHeaders, tt.want.VaryHeaders) ||
				!slices.Equal(d.VaryCookies, tt.want.VaryCookies) || d.ESI != tt.want.ESI || d.NoVary != tt.want.NoVary {
				t.Errorf("got Tags=%q Vary=%q Cookies=%q ESI=%v NoVary=%v\nwant Tags=%q Vary=%q Cookies=%q ESI=%v NoVary=%v",
					d.Tags, d.VaryHeaders, d.VaryCookies, d.ESI, d.NoVary,
					tt.want.Tags, tt.want.VaryHeaders, tt.want.VaryCookies, tt.want.ESI, tt.want.NoVary)
			}
		})
	}
}

func TestDecideLeavesListsEmptyWhenNotStored(t *testing.T) {
	d := Decide(input(Input{
		LSCacheControl: b("no-cache, esi=on"),
		TagHeaders:     [][]byte{b("a,b")},
		Vary:           b("Cookie"),
		LSVary:         b("cookie=x"),
	}))
	if d.Store || !d.ESI {
		t.Fatalf("got Store=%v ESI=%v, want false true", d.Store, d.ESI)
	}
	if d.Tags != nil || d.VaryHeaders != nil || d.VaryCookies != nil {
		t.Errorf("lists filled for a refused response: %q %q %q", d.Tags, d.VaryHeaders, d.VaryCookies)
	}
}

func TestDecideFillsPrivateLifetimeAndLists(t *testing.T) {
	d := Decide(input(Input{
		LSCacheControl: b("private, esi=on, max-age=60"),
		TagHeaders:     [][]byte{b("a,b")},
		Vary:           b("Cookie"),
		LSVary:         b("cookie=x"),
	}))
	if d.Store || !d.Private || !d.ESI || d.TTL != time.Minute {
		t.Fatalf("got Store=%v Private=%v ESI=%v TTL=%v, want false true true 1m", d.Store, d.Private, d.ESI, d.TTL)
	}
	if len(d.Tags) != 2 || len(d.VaryHeaders) != 1 || len(d.VaryCookies) != 1 {
		t.Errorf("private lists: %q %q %q", d.Tags, d.VaryHeaders, d.VaryCookies)
	}
}

func TestTargetedFieldMustBeAStructuredDictionary(t *testing.T) {
	tests := []struct {
		value string
		valid bool
	}{
		{"max-age=60", true},
		{"max-age=60, private", true},
		{"no-store", true},
		{"max-age=99999999999999", true},
		{`max-age=60, foo="bar";a=1, baz=(a b);c`, true},
		{"max-age=10000, &&&&&", false},
		{`max-age="10000"`, false},
		{"max-age=1.5", false},
		{"Max-Age=60", false},
		{"max-age=60,", false},
		{"max-age=9999999999999999", false},
	}
	for _, tt := range tests {
		if got := validTargeted([]byte(tt.value)); got != tt.valid {
			t.Errorf("validTargeted(%q) = %v, want %v", tt.value, got, tt.valid)
		}
	}
	d := Decide(input(Input{Targeted: b(`max-age="10000"`), CacheControl: b("no-store")}))
	if d.Store || d.Reason != "no-store" {
		t.Errorf("an invalid targeted field: Store=%v reason %q, want Cache-Control's no-store to govern", d.Store, d.Reason)
	}
}

func FuzzValidTargetedNeverPanics(f *testing.F) {
	for _, s := range []string{"max-age=60", `a="x\"y"`, "a=(b c);d", ":aGk=:", "?1", "-1.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { validTargeted([]byte(s)) })
}

// Implicit marks the lifetimes the site gave, which a caller must not
// apply to a request that carried a session.
func TestDecideMarksTheSitesLifetimeImplicit(t *testing.T) {
	lm := b(testNow.Add(-10 * time.Hour).Format(http.TimeFormat))
	tests := []struct {
		name     string
		in       Input
		implicit bool
	}{
		{"DefaultTTL", Input{DefaultTTL: time.Hour}, true},
		{"heuristic", Input{Heuristic: true, LastModified: lm}, true},
		{"max-age", Input{CacheControl: b("max-age=60"), DefaultTTL: time.Hour}, false},
		{"Expires", Input{Expires: b(testNow.Add(time.Hour).Format(http.TimeFormat)), DefaultTTL: time.Hour}, false},
		{"LSCache max-age", Input{LSCacheControl: b("public, max-age=60"), DefaultTTL: time.Hour}, false},
		{"no-cache with a validator", Input{CacheControl: b("no-cache"), Validators: true, DefaultTTL: time.Hour}, false},
	}
	for _, tt := range tests {
		d := Decide(input(tt.in))
		if !d.Store || d.Implicit != tt.implicit {
			t.Errorf("%s: Store %v (%q), Implicit %v, want stored, Implicit %v", tt.name, d.Store, d.Reason, d.Implicit, tt.implicit)
		}
	}
}
