package main_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// A client flooding a site with attacks the WAF stops (which costs it
// nothing upstream: ramjet answers 403 itself) does not push the URLs
// the site answered uncached out of its owner's list; they are listed
// first. Before, the list held one set of URLs, so 60 distinct attacks
// left only attacks in a.test's list of 3 (the cart, the account page and
// the plain page were gone).
func TestSiteStatsKeepTheUncachedURLsThroughAFloodOfAttacks(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", `admin:
  token: `+operatorToken+`
stats:
  top_urls: 3
hosts:
  - names: [a.test]
    admin_token: `+tokenA+`
    waf: {mode: block}
`))
	c := newClient(t)
	ns := nsFor(t)
	useful := map[string]bool{}
	for _, uri := range []string{
		"/e/" + ns + "/cart?" + hq("Cache-Control: max-age=300", "Set-Cookie: cart=1"),
		"/e/" + ns + "/account?" + hq("Cache-Control: private, max-age=300"),
		"/e/" + ns + "/plain",
	} {
		for range 3 {
			get(t, c, rj.URL+uri, "Host: a.test")
		}
		useful["http://a.test"+uri] = true
	}
	for i := range 60 {
		r := get(t, c, fmt.Sprintf("%s/e/%s/item?id=%d%%27+OR+%%271%%27%%3D%%271", rj.URL, ns, i), "Host: a.test",
			"User-Agent: Mozilla/5.0", "Accept: text/html")
		if r.Status != http.StatusForbidden {
			t.Fatalf("attack %d: status %d, want the WAF's 403", i, r.Status)
		}
	}
	code, s := getStats(t, c, rj, tokenA, "")
	if code != http.StatusOK || len(s.Sites) != 1 {
		t.Fatalf("GET /stats with a.test's token: %d %+v", code, s.Sites)
	}
	list := s.Sites[0].Uncached
	for i, u := range list {
		if i < 3 && !useful[u.URL] || i >= 3 && u.Reason != "waf" {
			t.Errorf("entry %d is %s (%s): want the 3 uncached URLs first, then the WAF's", i, u.URL, u.Reason)
		}
	}
	if len(list) != 6 {
		t.Errorf("%d URLs listed, want 3 uncached and 3 stopped: %+v", len(list), list)
	}
}

// A hosts[] entry named _default would be the default site in /stats and
// /metrics (the same label): its token read the URLs of every host no
// entry names, other tenants' included. ramjet check and serve refuse
// the name. Before, the config was taken and that token's GET /stats
// listed http://other-tenant.test/... .
func TestSiteStatsNoSiteIsNamedAsTheDefaultSite(t *testing.T) {
	t.Parallel()
	cfg := testbed.WriteConfig(t, "", `admin:
  token: `+operatorToken+`
hosts:
  - names: [_default]
    admin_token: `+tokenA+`
`)
	code, out := testbed.RunRamjet(t, 30*time.Second, "check", "--config", cfg)
	want := `hosts[0].names[0]: "_default" is what /stats and /metrics call the hosts no entry names`
	if code == 0 || !strings.Contains(out, want) {
		t.Fatalf("ramjet check: exit %d\n%s\nwant a failure saying %s", code, out, want)
	}
	code, out = testbed.RunRamjet(t, 30*time.Second, "serve", "--config", cfg)
	if code == 0 || !strings.Contains(out, want) {
		t.Errorf("ramjet serve: exit %d\n%s\nwant it refused, saying %s", code, out, want)
	}
}
