package main_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Who a stored answer may be served to: the private cache's identity,
// answers stored for a default TTL, and the variants one URL keeps.

// Two users behind one address whose session cookies are __Host- or
// __Secure- cookies, and who share every other cookie, each get their own
// private page: a cookie prefix marks a session, not analytics.
func TestPrivatePagesOfPrefixedSessionCookiesStayApart(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	for _, name := range []string{"__Host-sid", "__Secure-sid"} {
		u := rj.URL + "/e/private-" + name + "?" + hq("X-LiteSpeed-Cache-Control: private, max-age=300")
		shared := "; theme=dark; _ga=GA1.2.3"
		alice := get(t, c, u, "Cookie: "+name+"=alice"+shared)
		if again := get(t, c, u, "Cookie: "+name+"=alice"+shared); again.ID() != alice.ID() {
			t.Fatalf("%s: alice's second request (%s) did not get her private copy", name, again.Header.Get("Cache-Status"))
		}
		bob := get(t, c, u, "Cookie: "+name+"=bob"+shared)
		if bob.ID() == alice.ID() || !strings.Contains(bob.Echo()["hdr.cookie"], name+"=bob") {
			t.Fatalf("%s: bob got alice's private page (%s): %q", name, bob.Header.Get("Cache-Status"), bob.Echo()["hdr.cookie"])
		}
	}
}

// A site's default_ttl never stores, for the next visitor, the answer to
// a request that carried a session cookie: only analytics cookies (and
// the site's anonymous_cookies), the vary cookies and the paths listed in
// default_ttl_with_cookies let it.
// An answer with freshness of its own is stored as before.
func TestDefaultTTLNeverStoresASessionsAnswer(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "defaults:\n  default_ttl: 60s\n  default_ttl_with_cookies: [\"/e/assets-*\"]\n  anonymous_cookies: [\"ab_*\"]\n")
	tests := []struct {
		name, path, cookie string
		query              string
		stored             bool
	}{
		{"session cookie", "/e/ttl-session", "PHPSESSID=alice-session", "", false},
		{"__Host- session cookie", "/e/ttl-host", "__Host-sid=alice-session; _ga=GA1.2.3", "", false},
		{"analytics cookies only", "/e/ttl-analytics", "_ga=GA1.2.3; __utma=1.2; _fbp=fb.1.2", "", true},
		{"the site's anonymous cookies", "/e/ttl-ab", "ab_home=b; _ga=GA1.2.3", "", true},
		{"a path the site lists", "/e/assets-logo", "PHPSESSID=alice-session", "", true},
		{"the answer's own freshness", "/e/ttl-own", "PHPSESSID=alice-session", hq("Cache-Control: max-age=60"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.URL + tt.path + "?" + tt.query
			first := get(t, c, u, "Cookie: "+tt.cookie)
			anon := get(t, c, u)
			if !tt.stored {
				if cs := first.CacheStatus(); cs.Stored || cs.Detail != "cookie" {
					t.Errorf("session request: Cache-Status %q, want not stored, detail=cookie", cs.Raw)
				}
				// Not remembered as uncacheable: the anonymous answer is stored.
				mustMissStored(t, anon, "anonymous request after the session's")
				if strings.Contains(anon.Echo()["hdr.cookie"], "alice") {
					t.Fatalf("the anonymous visitor got the session's page")
				}
				return
			}
			mustMissStored(t, first, "request with "+tt.cookie)
			mustFreshHit(t, anon, "anonymous request")
			if n := o.waitRequests(t, tt.path, 1); n != 1 {
				t.Errorf("origin saw %d requests, want 1", n)
			}
		})
	}
	// An answer that varies on Cookie is stored for those cookies only.
	u := rj.URL + "/e/ttl-vary?" + hq("Vary: Cookie")
	mustMissStored(t, get(t, c, u, "Cookie: PHPSESSID=alice-session"), "Vary: Cookie, session request")
	mustFreshHit(t, get(t, c, u, "Cookie: PHPSESSID=alice-session"), "Vary: Cookie, same session")
	if r := get(t, c, u); strings.Contains(r.Echo()["hdr.cookie"], "alice") || r.CacheStatus().Hit {
		t.Fatalf("Vary: Cookie, anonymous request: %s with the session's page", r.Header.Get("Cache-Status"))
	}
}

// Made-up values of LSCache's vary cookie, hundreds of them, push out
// neither the plain variant every anonymous visitor gets nor one the
// application's visitors use: a URL keeps its variants by use.
func TestMadeUpVaryCookiesKeepThePlainAndUsedVariants(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	u := rj.URL + "/e/flood?" + hq("X-LiteSpeed-Cache-Control: public, max-age=300")
	const commenter = "Cookie: _lscache_vary=commenter"
	plain, comm := get(t, c, u), get(t, c, u, commenter)
	for range 3 {
		mustFreshHit(t, get(t, c, u), "anonymous")
		mustFreshHit(t, get(t, c, u, commenter), "commenter")
	}
	const workers, each = 4, 75 // 300 values, the cap is 32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r, err := tryDo(c, "GET", u, nil, fmt.Sprintf("Cookie: _lscache_vary=made-up-%d-%d", w, i))
				if err != nil || r.Status != 200 {
					t.Errorf("made-up value %d-%d: %v %d", w, i, err, r.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	if r := get(t, c, u); r.ID() != plain.ID() {
		t.Errorf("anonymous visitor after the flood: %s, want the plain variant stored before it", r.Header.Get("Cache-Status"))
	}
	if r := get(t, c, u, commenter); r.ID() != comm.ID() {
		t.Errorf("commenter after the flood: %s, want their variant stored before it", r.Header.Get("Cache-Status"))
	}
	if n, _ := metric(t, c, rj, "ramjet_cache_variants_dropped_total"); n < workers*each-32 {
		t.Errorf("ramjet_cache_variants_dropped_total = %v, want the refused made-up values counted", n)
	}
}
