package proxy

import (
	"hash/maphash"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestAnonymousCookiesAreNamedOneByOne(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"__utma", true}, {"__utmz", true}, {"_ga", true}, {"_ga_XYZ123", true}, {"_gid", true},
		{"_gat_UA-1-1", true}, {"_gcl_au", true}, {"_fbp", true}, {"_hjSessionUser_1", true},
		{"__hstc", true}, {"hubspotutk", true}, {"_pk_id.1.abcd", true}, {"_uetvid", true},
		{"_clck", true}, {"CookieConsent", true}, {"_lscache_vary", true}, {"bb_forum_view_1", true},
		// Sessions, whatever their name looks like.
		{"__Host-sid", false}, {"__Secure-sid", false}, {"__session", false}, {"__utmsession", false},
		{"_gax", false}, {"PHPSESSID", false}, {"sid", false}, {"wordpress_logged_in_x", false},
		{"_pk", false}, {"", false},
	}
	for _, tt := range tests {
		if got := anonymousCookie([]byte(tt.name)); got != tt.want {
			t.Errorf("anonymousCookie(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Two users behind one address who share their analytics cookies are two
// identities when their sessions are __Host- or __Secure- cookies.
func TestPrefixedSessionCookiesTellUsersApart(t *testing.T) {
	p := &Proxy{idSeed: maphash.MakeSeed()}
	ip := net.ParseIP("192.0.2.7")
	id := func(cookie string) uint64 {
		var h fasthttp.RequestHeader
		h.Set("Cookie", cookie)
		return p.identity(&h, ip, newPatterns([]string{"ab_test", "consent_*"}))
	}
	for _, name := range []string{"__Host-sid", "__Secure-sid", "__sess"} {
		a, b := id("_ga=GA1.1; "+name+"=alice"), id("_ga=GA1.1; "+name+"=bob")
		if a == 0 || b == 0 || a == b {
			t.Errorf("%s: identities %x and %x, want two different non-zero ones", name, a, b)
		}
	}
	if got := id("_ga=GA1.1; __utma=1; _fbp=fb.1; ab_test=b; consent_v2=yes"); got != 0 {
		t.Errorf("analytics and the site's anonymous cookies only: identity %x, want none", got)
	}
	if a, b := id("sid=s; _ga=GA1.1"), id("sid=s; _ga=GA1.2; _gid=x"); a != b {
		t.Errorf("analytics cookies changed the identity: %x != %x", a, b)
	}
}

func TestSessionCookieIsAnyButAnonymousAndVaryingOnes(t *testing.T) {
	tests := []struct {
		cookie  string
		session bool
	}{
		{"", false},
		{"_ga=GA1.2; __utma=1; _fbp=fb", false},
		{"lang=de; _ga=GA1.2", false}, // lang selects the variant
		{"PHPSESSID=abc; _ga=GA1.2", true},
		{"__Host-sid=abc", true},
		{"PHPSESSID=", false},              // empty: no session
		{"ab_test=b; consent_v2=1", false}, // the site's own anonymous ones
	}
	for _, tt := range tests {
		var h fasthttp.RequestHeader
		h.Set("Cookie", tt.cookie)
		if got := sessionCookie(&h, []string{"lang"}, newPatterns([]string{"ab_test", "consent_*"})); got != tt.session {
			t.Errorf("sessionCookie(%q) = %v, want %v", tt.cookie, got, tt.session)
		}
	}
}
