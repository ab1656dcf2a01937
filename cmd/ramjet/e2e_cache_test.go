package main_test

// End-to-end tests of what ramjet stores, for how long, and for whom.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestMissThenHit(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	u := rj.URL + "/e/miss-hit?" + hq("Cache-Control: max-age=60")

	first := get(t, c, u)
	mustMissStored(t, first, "first GET")
	second := get(t, c, u)
	mustFreshHit(t, second, "second GET")
	if first.ID() == "" || second.ID() != first.ID() {
		t.Errorf("hit body id %q, want the stored %q", second.ID(), first.ID())
	}
	if n := o.waitRequests(t, "/e/miss-hit", 1); n != 1 {
		t.Errorf("origin saw %d requests, want 1", n)
	}
}

func TestExpiredEntryIsRefetched(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "defaults:\n  grace: 0s\n")
	u := rj.URL + "/e/ttl?" + hq("Cache-Control: max-age=1")

	first := get(t, c, u)
	mustMissStored(t, first, "first GET")
	mustFreshHit(t, get(t, c, u), "GET within max-age")

	third, _, ok := awaitChange(t, c, u, first.ID(), ttlWait) // max-age=1 runs out; grace is 0
	if !ok {
		t.Fatalf("still a fresh hit %v after a max-age=1 store", ttlWait)
	}
	mustStatus(t, third, http.StatusOK, "GET after expiry")
	cs := third.CacheStatus()
	if cs.Hit || (cs.Fwd != "stale" && cs.Fwd != "miss") {
		t.Fatalf("GET after expiry: Cache-Status %q, want fwd=stale or fwd=miss without hit", cs.Raw)
	}
	if third.ID() == first.ID() {
		t.Fatalf("GET after expiry returned the expired body %q", first.ID())
	}
	fourth := get(t, c, u)
	mustFreshHit(t, fourth, "GET after refetch")
	if fourth.ID() != third.ID() {
		t.Errorf("hit after refetch has body %q, want the refetched %q", fourth.ID(), third.ID())
	}
	if n := o.waitRequests(t, "/e/ttl", 2); n != 2 {
		t.Errorf("origin saw %d requests, want 2", n)
	}
}

func TestFreshnessHeadersDecideStorage(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	plain := startRamjet(t, o.URL)
	withTTL := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "defaults:\n  default_ttl: 60s\n"))
	c := newClient(t)
	now := time.Now()

	tests := []struct {
		name       string
		headers    []string
		defaultTTL bool // use the ramjet with default_ttl: 60s
		stored     bool
	}{
		{"litespeed-public-max-age", []string{"X-LiteSpeed-Cache-Control: public, max-age=60"}, false, true},
		{"litespeed-overrides-cache-control", []string{"X-LiteSpeed-Cache-Control: public, max-age=60", "Cache-Control: no-store"}, false, true},
		{"litespeed-no-cache", []string{"X-LiteSpeed-Cache-Control: no-cache", "Cache-Control: max-age=60"}, false, false},
		{"litespeed-private-is-not-shared", []string{"X-LiteSpeed-Cache-Control: private, max-age=60", "Cache-Control: max-age=60"}, false, false},
		{"surrogate-control-max-age", []string{"Surrogate-Control: max-age=60"}, false, true},
		{"surrogate-control-overrides-cache-control", []string{"Surrogate-Control: max-age=60", "Cache-Control: max-age=0"}, false, true},
		{"cache-control-max-age", []string{"Cache-Control: max-age=60"}, false, true},
		{"cache-control-s-maxage-over-max-age", []string{"Cache-Control: s-maxage=60, max-age=0"}, false, true},
		{"cache-control-s-maxage-zero", []string{"Cache-Control: max-age=60, s-maxage=0"}, false, false},
		{"cache-control-public-max-age", []string{"Cache-Control: public, max-age=60"}, false, true},
		{"cache-control-no-store", []string{"Cache-Control: no-store, max-age=60"}, false, false},
		{"cache-control-private", []string{"Cache-Control: private, max-age=60"}, false, false},
		{"cache-control-no-cache", []string{"Cache-Control: no-cache, max-age=60"}, false, false},
		{"expires-future", []string{"Expires: " + httpDate(now.Add(time.Hour))}, false, true},
		{"expires-past", []string{"Expires: " + httpDate(now.Add(-time.Hour))}, false, false},
		{"max-age-overrides-expires", []string{"Cache-Control: max-age=0", "Expires: " + httpDate(now.Add(time.Hour))}, false, false},
		{"vary-star-never-stored", []string{"Cache-Control: max-age=60", "Vary: *"}, false, false},
		{"no-freshness-default-ttl-0", nil, false, false},
		{"no-freshness-default-ttl-60s", nil, true, true},
		{"default-ttl-keeps-no-store", []string{"Cache-Control: no-store"}, true, false},
		{"default-ttl-keeps-private", []string{"Cache-Control: private"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rj := plain
			if tt.defaultTTL {
				rj = withTTL
			}
			path := "/e/fresh-" + tt.name
			u := rj.URL + path + "?" + hq(tt.headers...)
			first := get(t, c, u)
			second := get(t, c, u)
			if tt.stored {
				mustMissStored(t, first, "first GET")
				mustFreshHit(t, second, "second GET")
				if second.ID() != first.ID() {
					t.Errorf("hit body %q, want the stored %q", second.ID(), first.ID())
				}
				if n := o.waitRequests(t, path, 1); n != 1 {
					t.Errorf("origin saw %d requests, want 1", n)
				}
				return
			}
			mustNotStored(t, first, "first GET")
			mustNotStored(t, second, "second GET")
			if second.ID() == first.ID() {
				t.Errorf("second GET got the first body %q: it was stored", first.ID())
			}
			if n := o.waitRequests(t, path, 2); n != 2 {
				t.Errorf("origin saw %d requests, want 2", n)
			}
		})
	}
}

func TestVaryOnRequestHeaderSplitsVariants(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	u := rj.URL + "/e/vary-lang?" + hq("Cache-Control: max-age=60", "Vary: Accept-Language")

	en := get(t, c, u, "Accept-Language: en")
	mustMissStored(t, en, "first en")
	if got := en.Echo()["hdr.accept-language"]; got != "en" {
		t.Fatalf("origin saw Accept-Language %q, want en", got)
	}
	de := get(t, c, u, "Accept-Language: de")
	mustStatus(t, de, http.StatusOK, "first de")
	if cs := de.CacheStatus(); cs.Hit || cs.Fwd != "vary-miss" || !cs.Stored {
		t.Fatalf("first de: Cache-Status %q, want ramjet; fwd=vary-miss; stored", cs.Raw)
	}
	if got := de.Echo()["hdr.accept-language"]; got != "de" {
		t.Fatalf("de request answered with the body for Accept-Language %q", got)
	}
	for _, v := range []struct {
		lang string
		want result
	}{{"en", en}, {"de", de}, {"en", en}} {
		r := get(t, c, u, "Accept-Language: "+v.lang)
		mustFreshHit(t, r, "repeat "+v.lang)
		if r.ID() != v.want.ID() {
			t.Errorf("repeat %s: body %q, want %q", v.lang, r.ID(), v.want.ID())
		}
	}
	if n := o.waitRequests(t, "/e/vary-lang", 2); n != 2 {
		t.Errorf("origin saw %d requests, want 2", n)
	}
}

func TestLiteSpeedVaryCookieSplitsVariants(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	u := rj.URL + "/e/ls-vary?" + hq("X-LiteSpeed-Cache-Control: public, max-age=60", "X-LiteSpeed-Vary: cookie=lang")

	en := get(t, c, u, "Cookie: lang=en")
	mustMissStored(t, en, "first lang=en")
	fr := get(t, c, u, "Cookie: lang=fr")
	mustStatus(t, fr, http.StatusOK, "first lang=fr")
	if cs := fr.CacheStatus(); cs.Hit || !strings.Contains(cs.Fwd, "miss") {
		t.Fatalf("first lang=fr: Cache-Status %q, want a miss", cs.Raw)
	}
	if fr.ID() == en.ID() {
		t.Fatal("lang=fr got the lang=en variant")
	}
	tests := []struct {
		name, cookie string
		want         result
	}{
		{"en again", "Cookie: lang=en", en},
		{"fr again", "Cookie: lang=fr", fr},
		{"en with another cookie", "Cookie: theme=dark; lang=en", en},
	}
	for _, tt := range tests {
		r := get(t, c, u, tt.cookie)
		mustFreshHit(t, r, tt.name)
		if r.ID() != tt.want.ID() {
			t.Errorf("%s: body %q, want %q", tt.name, r.ID(), tt.want.ID())
		}
	}
	none := get(t, c, u)
	if cs := none.CacheStatus(); cs.Hit {
		t.Errorf("request without the lang cookie: Cache-Status %q, want a miss (own variant)", cs.Raw)
	}
	if none.ID() == en.ID() || none.ID() == fr.ID() {
		t.Errorf("request without the lang cookie got a lang variant")
	}
	if n := o.waitRequests(t, "/e/ls-vary", 3); n != 3 {
		t.Errorf("origin saw %d requests, want 3", n)
	}
}

func TestLSCacheVaryCookieSplitsVariants(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	u := rj.URL + "/e/lscache-vary?" + hq("Cache-Control: max-age=60")

	anon := get(t, c, u)
	mustMissStored(t, anon, "no _lscache_vary")
	a := get(t, c, u, "Cookie: _lscache_vary=aaa")
	if cs := a.CacheStatus(); cs.Hit || a.ID() == anon.ID() {
		t.Fatalf("_lscache_vary=aaa: Cache-Status %q, got the cookieless variant", cs.Raw)
	}
	b := get(t, c, u, "Cookie: _lscache_vary=bbb")
	if cs := b.CacheStatus(); cs.Hit || b.ID() == a.ID() || b.ID() == anon.ID() {
		t.Fatalf("_lscache_vary=bbb: Cache-Status %q, got another variant", cs.Raw)
	}
	for _, tt := range []struct {
		name string
		hdr  []string
		want result
	}{
		{"aaa again", []string{"Cookie: _lscache_vary=aaa"}, a},
		{"bbb again", []string{"Cookie: _lscache_vary=bbb"}, b},
		{"no cookie again", nil, anon},
	} {
		r := get(t, c, u, tt.hdr...)
		mustFreshHit(t, r, tt.name)
		if r.ID() != tt.want.ID() {
			t.Errorf("%s: body %q, want %q", tt.name, r.ID(), tt.want.ID())
		}
	}
}

func TestVaryCookiesConfigSplitsVariants(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "defaults:\n  vary_cookies: [\"currency\"]\n")
	u := rj.URL + "/e/vary-cookies?" + hq("Cache-Control: max-age=60")

	eur := get(t, c, u, "Cookie: currency=EUR")
	mustMissStored(t, eur, "currency=EUR")
	usd := get(t, c, u, "Cookie: currency=USD")
	if cs := usd.CacheStatus(); cs.Hit || usd.ID() == eur.ID() {
		t.Fatalf("currency=USD: Cache-Status %q, got the EUR variant", cs.Raw)
	}
	again := get(t, c, u, "Cookie: currency=EUR; other=1")
	mustFreshHit(t, again, "currency=EUR again")
	if again.ID() != eur.ID() {
		t.Errorf("currency=EUR again: body %q, want %q", again.ID(), eur.ID())
	}
}

func TestBypassCookiesSkipCache(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	u := rj.URL + "/e/bypass?" + hq("Cache-Control: max-age=60")
	cached := get(t, c, u)
	mustMissStored(t, cached, "anonymous GET")

	for i, cookie := range []string{
		"wordpress_logged_in_0123abcd=admin%7C1234",
		"wp-postpass_0123abcd=x",
		"comment_author_0123abcd=bob",
		"woocommerce_items_in_cart=1",
		"woocommerce_cart_hash=abc",
	} {
		t.Run(cookie, func(t *testing.T) {
			r := get(t, c, u, "Cookie: theme=dark; "+cookie)
			mustStatus(t, r, http.StatusOK, "GET with bypass cookie")
			if cs := r.CacheStatus(); cs.Hit || cs.Fwd != "bypass" {
				t.Errorf("Cache-Status %q, want ramjet; fwd=bypass", cs.Raw)
			}
			if r.ID() == cached.ID() {
				t.Errorf("bypass request was served the cached body")
			}
			if got := r.Echo()["hdr.cookie"]; !strings.Contains(got, cookie) {
				t.Errorf("origin saw Cookie %q, want it to contain %q", got, cookie)
			}
			if n := o.waitRequests(t, "/e/bypass", 2+i); n != 2+i {
				t.Errorf("origin saw %d requests, want %d", n, 2+i)
			}
		})
	}

	t.Run("bypass response is not stored", func(t *testing.T) {
		r := get(t, c, u)
		mustFreshHit(t, r, "anonymous GET after bypasses")
		if r.ID() != cached.ID() {
			t.Errorf("anonymous GET got body %q, want the first stored %q", r.ID(), cached.ID())
		}
		fresh := rj.URL + "/e/bypass-first?" + hq("Cache-Control: max-age=60")
		get(t, c, fresh, "Cookie: wordpress_logged_in_x=1")
		if cs := get(t, c, fresh).CacheStatus(); cs.Hit {
			t.Errorf("anonymous GET after a bypassed first request: Cache-Status %q, want a miss", cs.Raw)
		}
	})

	t.Run("other cookies still hit", func(t *testing.T) {
		r := get(t, c, u, "Cookie: theme=dark; _ga=GA1.1.1")
		mustFreshHit(t, r, "GET with an unrelated cookie")
		if r.ID() != cached.ID() {
			t.Errorf("body %q, want %q", r.ID(), cached.ID())
		}
	})
}

func TestConfiguredBypassCookies(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "defaults:\n  bypass_cookies: [\"session_*\", \"exact\"]\n")
	u := rj.URL + "/e/bypass-conf?" + hq("Cache-Control: max-age=60")
	mustMissStored(t, get(t, c, u), "anonymous GET")
	for _, cookie := range []string{"session_abc=1", "exact=1"} {
		if cs := get(t, c, u, "Cookie: "+cookie).CacheStatus(); cs.Fwd != "bypass" {
			t.Errorf("Cookie %s: Cache-Status %q, want fwd=bypass", cookie, cs.Raw)
		}
	}
	mustFreshHit(t, get(t, c, u, "Cookie: exactly=1; sessionx=2"), "GET with non-matching cookies")
}

func TestSetCookieNeverStoredNorShared(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL)
	c := newClient(t)

	// cookieID returns the id in "sess=<id>; ..." or "".
	cookieID := func(r result) string {
		v, ok := strings.CutPrefix(r.Header.Get("Set-Cookie"), "sess=")
		if !ok {
			return ""
		}
		id, _, _ := strings.Cut(v, ";")
		return id
	}

	t.Run("sequential", func(t *testing.T) {
		u := rj.URL + "/e/setcookie-seq?setcookie=1&" + hq("Cache-Control: public, max-age=60")
		a := get(t, c, u)
		mustNotStored(t, a, "client A")
		if cookieID(a) != a.ID() {
			t.Fatalf("client A: Set-Cookie %q, want its own sess=%s", a.Header.Get("Set-Cookie"), a.ID())
		}
		b := get(t, c, u)
		mustNotStored(t, b, "client B")
		if b.ID() == a.ID() {
			t.Fatal("client B was served client A's response")
		}
		if cookieID(b) != b.ID() {
			t.Fatalf("client B: Set-Cookie %q, want its own sess=%s (A's was %s)", b.Header.Get("Set-Cookie"), b.ID(), a.ID())
		}
		if n := o.waitRequests(t, "/e/setcookie-seq", 2); n != 2 {
			t.Errorf("origin saw %d requests, want 2", n)
		}
	})

	t.Run("concurrent clients are not coalesced", func(t *testing.T) {
		const n = 8
		u := rj.URL + "/e/setcookie-par?setcookie=1&sleep_ms=300&" + hq("Cache-Control: public, max-age=60")
		seen := map[string]bool{}
		for i, r := range parallelGet(t, c, n, u) {
			mustStatus(t, r, http.StatusOK, fmt.Sprintf("client %d", i))
			if cookieID(r) == "" || cookieID(r) != r.ID() {
				t.Errorf("client %d: Set-Cookie %q with body %q: cookie and body must come from one origin response", i, r.Header.Get("Set-Cookie"), r.ID())
			}
			if seen[r.ID()] {
				t.Errorf("client %d: response %q was also served to another client", i, r.ID())
			}
			seen[r.ID()] = true
		}
		if got := o.waitRequests(t, "/e/setcookie-par", n); got != n {
			t.Errorf("origin saw %d requests, want %d", got, n)
		}
	})

	t.Run("cache_set_cookie stores without the cookie", func(t *testing.T) {
		rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "defaults:\n  cache_set_cookie: true\n"))
		u := rj.URL + "/e/setcookie-store?setcookie=1&" + hq("Cache-Control: max-age=60")
		a := get(t, c, u)
		mustMissStored(t, a, "client A")
		if cookieID(a) != a.ID() {
			t.Errorf("client A: Set-Cookie %q, want its own sess=%s", a.Header.Get("Set-Cookie"), a.ID())
		}
		b := get(t, c, u)
		mustFreshHit(t, b, "client B")
		if b.ID() != a.ID() {
			t.Errorf("client B: body %q, want the stored %q", b.ID(), a.ID())
		}
		if sc := b.Header.Values("Set-Cookie"); len(sc) != 0 {
			t.Errorf("client B got Set-Cookie %q from the cache", sc)
		}
	})
}

// RFC 9111 3.5: a response to a request with Authorization is stored only
// when it says a shared cache may (public, s-maxage, must-revalidate),
// and such a request is answered only from entries that say so.
func TestAuthorizationSharesOnlyWhatTheResponseAllows(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	const auth = "Authorization: Basic dXNlcjpwYXNz"

	t.Run("an entry not said to be shared does not answer it", func(t *testing.T) {
		u := rj.URL + "/e/auth-cached?" + hq("Cache-Control: max-age=60")
		anon := get(t, c, u)
		mustMissStored(t, anon, "anonymous GET")
		r := get(t, c, u, auth)
		mustStatus(t, r, http.StatusOK, "GET with Authorization")
		if cs := r.CacheStatus(); cs.Hit || cs.Stored {
			t.Errorf("GET with Authorization: Cache-Status %q, want neither a hit nor stored", cs.Raw)
		}
		if r.ID() == anon.ID() {
			t.Fatal("request with Authorization was served the anonymous entry")
		}
		if got := r.Echo()["hdr.authorization"]; got != "Basic dXNlcjpwYXNz" {
			t.Errorf("origin saw Authorization %q", got)
		}
		again := get(t, c, u)
		mustFreshHit(t, again, "anonymous GET after")
		if again.ID() != anon.ID() {
			t.Errorf("anonymous GET got %q, want the anonymous entry %q", again.ID(), anon.ID())
		}
	})

	t.Run("an answer not said to be shared is not stored", func(t *testing.T) {
		u := rj.URL + "/e/auth-store?" + hq("Cache-Control: max-age=60")
		r := get(t, c, u, auth)
		mustStatus(t, r, http.StatusOK, "GET with Authorization")
		if r.CacheStatus().Stored {
			t.Errorf("GET with Authorization: Cache-Status %q, a non-public answer must not be stored", r.Header.Get("Cache-Status"))
		}
		anon := get(t, c, u)
		if anon.ID() == r.ID() {
			t.Fatal("anonymous client was served the response to an authorized request")
		}
		if n := o.waitRequests(t, "/e/auth-store", 2); n != 2 {
			t.Errorf("origin saw %d requests, want 2", n)
		}
	})

	t.Run("a public answer is stored and shared", func(t *testing.T) {
		u := rj.URL + "/e/auth-public?" + hq("Cache-Control: public, max-age=60")
		r := get(t, c, u, auth)
		mustMissStored(t, r, "GET with Authorization")
		other := get(t, c, u, "Authorization: Basic b3RoZXI6eA==")
		mustFreshHit(t, other, "GET with other credentials")
		if other.ID() != r.ID() {
			t.Fatalf("other credentials got %q, want the shared entry %q", other.ID(), r.ID())
		}
	})
}

func TestHeadAnsweredFromGetEntry(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	u := rj.URL + "/e/head?size=5000&" + hq("Cache-Control: max-age=60", `ETag: "h1"`, "X-Test-App: yes")

	tests := []struct {
		name string
		hdr  []string
	}{
		{"identity", nil},
		{"gzip", []string{"Accept-Encoding: gzip"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := get(t, c, u, tt.hdr...)
			if i == 0 {
				mustMissStored(t, g, "GET")
				g = get(t, c, u, tt.hdr...)
			}
			mustFreshHit(t, g, "GET")
			h := do(t, c, http.MethodHead, u, tt.hdr...)
			mustFreshHit(t, h, "HEAD")
			if len(h.Body) != 0 {
				t.Errorf("HEAD returned %d body bytes", len(h.Body))
			}
			if want := fmt.Sprint(len(g.Body)); h.Header.Get("Content-Length") != want {
				t.Errorf("HEAD Content-Length %q, want %s (the GET body length)", h.Header.Get("Content-Length"), want)
			}
			for _, name := range []string{"Content-Type", "Content-Encoding", "ETag", "X-Test-App", "Vary"} {
				if got, want := h.Header.Values(name), g.Header.Values(name); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("HEAD %s %q, GET had %q", name, got, want)
				}
			}
		})
	}
	if n := o.waitRequests(t, "/e/head", 1); n != 1 {
		t.Errorf("origin saw %d requests, want 1 (HEAD must come from the GET entry)", n)
	}
}

func TestQueryNormalisationSharesEntry(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	cc := hq("Cache-Control: max-age=60")
	base := get(t, c, rj.URL+"/e/query?a=1&b=2&"+cc)
	mustMissStored(t, base, "?a=1&b=2")

	tests := []struct {
		name  string
		query string
		same  bool
	}{
		{"reordered", "b=2&" + cc + "&a=1", true},
		{"tracking parameters dropped", "utm_source=x&b=2&utm_medium=email&a=1&gclid=g1&fbclid=f1&_ga=GA1.2&" + cc, true},
		{"other value", "a=1&b=3&" + cc, false},
		{"parameter missing", "a=1&" + cc, false},
		{"non-tracking extra parameter", "a=1&b=2&utm=1&" + cc, false},
	}
	misses := 1
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, c, rj.URL+"/e/query?"+tt.query)
			if tt.same {
				mustFreshHit(t, r, "?"+tt.query)
				if r.ID() != base.ID() {
					t.Errorf("body %q, want the entry for ?a=1&b=2 %q", r.ID(), base.ID())
				}
				return
			}
			misses++
			mustMissStored(t, r, "?"+tt.query)
		})
	}
	if n := o.waitRequests(t, "/e/query", misses); n != misses {
		t.Errorf("origin saw %d requests, want %d", n, misses)
	}
}

func TestHostSettingsOverrideDefaults(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, `defaults:
  default_ttl: 0s
hosts:
  - names: ["cached.test", "*.wild.test"]
    default_ttl: 60s
  - names: ["off.test"]
    cache: false
`)
	u := rj.URL + "/e/hosts"
	tests := []struct {
		host   string
		stored bool
	}{
		{"cached.test", true},
		{"a.wild.test", true},
		{"other.test", false},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			first := get(t, c, u, "Host: "+tt.host)
			if got := first.Echo()["hdr.host"]; got != tt.host {
				t.Fatalf("origin saw Host %q, want %q", got, tt.host)
			}
			if !tt.stored {
				mustNotStored(t, first, "first GET")
				return
			}
			mustMissStored(t, first, "first GET")
			second := get(t, c, u, "Host: "+tt.host)
			mustFreshHit(t, second, "second GET")
			if second.ID() != first.ID() {
				t.Errorf("body %q, want %q", second.ID(), first.ID())
			}
			for h, id := range ids {
				if id == first.ID() {
					t.Errorf("host %s was served the entry of host %s", tt.host, h)
				}
			}
			ids[tt.host] = first.ID()
		})
	}
	t.Run("cache off", func(t *testing.T) {
		r := get(t, c, rj.URL+"/e/hosts-off?"+hq("Cache-Control: max-age=60"), "Host: off.test")
		mustStatus(t, r, http.StatusOK, "GET")
		if cs := r.CacheStatus(); cs.Hit || cs.Fwd != "bypass" {
			t.Errorf("Cache-Status %q, want ramjet; fwd=bypass for a host with cache: false", cs.Raw)
		}
	})
}

func TestUnsafeMethodsAreForwarded(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	path := "/e/method"
	u := rj.URL + path + "?" + hq("Cache-Control: max-age=60")

	mustMissStored(t, get(t, c, u), "GET")
	mustFreshHit(t, get(t, c, u), "GET")
	for i, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		r, err := tryDo(c, method, u, strings.NewReader("payload-"+method))
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, r, http.StatusOK, method)
		if cs := r.CacheStatus(); cs.Hit || cs.Fwd != "method" {
			t.Errorf("%s: Cache-Status %q, want ramjet; fwd=method", method, cs.Raw)
		}
		if e := r.Echo(); e["method"] != method || e["reqbody-sha256"] != sha256Hex([]byte("payload-"+method)) {
			t.Errorf("%s: origin saw method %q body sha %q", method, e["method"], e["reqbody-sha256"])
		}
		if n := o.waitRequests(t, path, 2+i); n != 2+i {
			t.Errorf("after %s origin saw %d requests, want %d", method, n, 2+i)
		}
	}
	// RFC 9111 section 4.4: a successful unsafe request invalidates the URI.
	if cs := get(t, c, u).CacheStatus(); cs.Hit {
		t.Errorf("GET after POST/PUT/DELETE: Cache-Status %q, want the entry invalidated", cs.Raw)
	}
}

func TestHitForPassSkipsCoalescing(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "cache:\n  hit_for_pass: 30s\n")
	const n = 4 // php-fpm runs 4 children: all can sleep at once
	path := "/e/hit-for-pass"
	u := rj.URL + path + "?sleep_ms=500&" + hq("Cache-Control: private")
	mustNotStored(t, get(t, c, u), "first GET")

	start := time.Now()
	results := parallelGet(t, c, n, u)
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Errorf("%d concurrent requests to an uncacheable URL took %v: they were serialised, not passed", n, el)
	}
	seen := map[string]bool{}
	for i, r := range results {
		mustStatus(t, r, http.StatusOK, fmt.Sprintf("request %d", i))
		if cs := r.CacheStatus(); cs.Hit || cs.Fwd != "uri-miss" || cs.Stored || cs.Collapsed {
			t.Errorf("request %d: Cache-Status %q, want ramjet; fwd=uri-miss", i, cs.Raw)
		}
		if seen[r.ID()] {
			t.Errorf("request %d: response %q shared with another request", i, r.ID())
		}
		seen[r.ID()] = true
	}
	if got := o.waitRequests(t, path, 1+n); got != 1+n {
		t.Errorf("origin saw %d requests, want %d", got, 1+n)
	}
}
