package main_test

import (
	"strings"
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
