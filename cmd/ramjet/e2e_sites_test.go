package main_test

// End-to-end tests of site isolation on a shared host: three sites behind
// one ramjet (and two nodes with Redis), each caching the same paths with
// the same tag names. A tenant's purge — from its responses, its PURGE
// requests or its admin token — reaches only its own pages; the
// operator's reaches every site.

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const (
	operatorToken = "operator-token"
	tokenA        = "tenant-a-token"
	tokenB        = "tenant-b-token"
)

// sitesYAML configures a.test (two names), b.test (its own 4MiB cache)
// and c.test (no token).
const sitesYAML = `admin:
  token: ` + operatorToken + `
hosts:
  - names: [a.test, www.a.test]
    admin_token: ` + tokenA + `
  - names: [b.test]
    admin_token: ` + tokenB + `
    cache_size: 4MiB
  - names: [c.test]
`

const operatorAuth = "Authorization: Bearer " + operatorToken

var tenantSites = []string{"a.test", "www.a.test", "b.test", "c.test"}

// The pages every site caches: the same paths and tag names everywhere.
var tenantPages = map[string]page{
	"home": {path: "home", tags: []string{"home"}},
	"post": {path: "post-1", tags: []string{"post-1"}},
}

// tenantSet is every site's copy of every tenant page: "site/page" → body id.
type tenantSet map[string]string

func cacheTenantPages(t testing.TB, c *http.Client, rj *testbed.Ramjet, ns string) tenantSet {
	t.Helper()
	ids := tenantSet{}
	for _, host := range tenantSites {
		for name, p := range tenantPages {
			u := rj.URL + p.uri(ns)
			first := get(t, c, u, "Host: "+host)
			mustMissStored(t, first, "caching "+host+" "+name)
			mustFreshHit(t, get(t, c, u, "Host: "+host), host+" "+name+" once cached")
			ids[host+"/"+name] = first.ID()
		}
	}
	return ids
}

// checkTenantFates checks every site's pages: those listed in gone must
// have been purged, every other one kept.
func checkTenantFates(t *testing.T, c *http.Client, rj *testbed.Ramjet, ns string, ids tenantSet, gone ...string) {
	t.Helper()
	for key, id := range ids {
		host, name, _ := strings.Cut(key, "/")
		f := kept
		for _, g := range gone {
			if g == key || g == host+"/*" {
				f = hard
			}
		}
		t.Run(strings.ReplaceAll(key, "/", "-")+"-"+string(f), func(t *testing.T) {
			mustFate(t, c, rj.URL+tenantPages[name].uri(ns), id, f, key, "Host: "+host)
		})
	}
}

// expandGone lists every page a gone list names ("site/*" is all of
// the site's).
func expandGone(gone []string) []string {
	var out []string
	for _, g := range gone {
		host, name, _ := strings.Cut(g, "/")
		if name != "*" {
			out = append(out, g)
			continue
		}
		for n := range tenantPages {
			out = append(out, host+"/"+n)
		}
	}
	return out
}

func TestSitePurgesReachOnlyTheirSite(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	// A purging response of a.test carrying the given headers.
	fromA := func(headers ...string) func(*testing.T, *testbed.Ramjet, string) {
		return func(t *testing.T, rj *testbed.Ramjet, ns string) {
			r := get(t, newClient(t), rj.URL+"/e/"+ns+"/purger?"+hq(headers...), "Host: a.test")
			mustStatus(t, r, http.StatusOK, "a.test's purging page")
			mustNotLeakPurgeHeaders(t, r, "a.test's purging page")
		}
	}
	admin := func(status int, token, query string) func(*testing.T, *testbed.Ramjet, string) {
		return func(t *testing.T, rj *testbed.Ramjet, ns string) {
			query = strings.NewReplacer("{ns}", ns, "{home}", url.QueryEscape(tenantPages["home"].uri(ns))).Replace(query)
			r := adminPost(t, newClient(t), rj, query, "", "", "Authorization: Bearer "+token)
			if r.Status != status {
				t.Fatalf("POST /purge?%s with %s: status %d, want %d; body %q", query, token, r.Status, status, r.Body)
			}
		}
	}
	tests := []struct {
		name  string
		purge func(t *testing.T, rj *testbed.Ramjet, ns string)
		gone  []string // "site/page", or "site/*"
	}{
		{name: "header-star", purge: fromA("X-LiteSpeed-Purge: *"), gone: []string{"a.test/*", "www.a.test/*"}},
		{name: "header-tag-every-site-uses", purge: fromA("X-LiteSpeed-Purge: tag=home"), gone: []string{"a.test/home", "www.a.test/home"}},
		{name: "header-tag-prefix", purge: fromA("X-LiteSpeed-Purge: tag=post*"), gone: []string{"a.test/post", "www.a.test/post"}},
		{name: "header-url-of-another-site", purge: func(t *testing.T, rj *testbed.Ramjet, ns string) {
			fromA("X-LiteSpeed-Purge: http://b.test"+tenantPages["home"].uri(ns))(t, rj, ns)
		}},
		{name: "header-path", purge: func(t *testing.T, rj *testbed.Ramjet, ns string) {
			fromA("X-LiteSpeed-Purge: "+tenantPages["home"].uri(ns))(t, rj, ns)
		}, gone: []string{"a.test/home", "www.a.test/home"}},
		{name: "cache-group-invalidation", purge: fromA("Cache-Group-Invalidation: home"), gone: []string{"a.test/home", "www.a.test/home"}},
		{name: "purge-method-surrogate-key", purge: func(t *testing.T, rj *testbed.Ramjet, ns string) {
			r := do(t, newClient(t), "PURGE", rj.URL+"/", "Host: b.test", "Surrogate-Key: home", "Authorization: Bearer "+tokenB)
			mustStatus(t, r, http.StatusOK, "PURGE with Surrogate-Key")
		}, gone: []string{"b.test/home"}},
		{name: "purge-method-url", purge: func(t *testing.T, rj *testbed.Ramjet, ns string) {
			r := do(t, newClient(t), "PURGE", rj.URL+tenantPages["post"].uri(ns), "Host: c.test")
			mustStatus(t, r, http.StatusOK, "PURGE of a URL")
		}, gone: []string{"c.test/post"}},
		{name: "site-token-all", purge: admin(http.StatusOK, tokenB, "all=1"), gone: []string{"b.test/*"}},
		{name: "site-token-tag", purge: admin(http.StatusOK, tokenA, "tag=home"), gone: []string{"a.test/home", "www.a.test/home"}},
		{name: "site-token-path", purge: admin(http.StatusOK, tokenA, "url={home}"), gone: []string{"a.test/home", "www.a.test/home"}},
		{name: "site-token-on-another-site", purge: admin(http.StatusForbidden, tokenA, "url={home}&host=b.test")},
		{name: "site-token-absolute-url-of-another-site", purge: admin(http.StatusForbidden, tokenB, "url=http%3A%2F%2Fc.test{home}")},
		{name: "unknown-token", purge: admin(http.StatusUnauthorized, "tenant-c-guess", "all=1")},
		{name: "operator-all", purge: admin(http.StatusOK, operatorToken, "all=1"),
			gone: []string{"a.test/*", "www.a.test/*", "b.test/*", "c.test/*"}},
		{name: "operator-tag", purge: admin(http.StatusOK, operatorToken, "tag=home"),
			gone: []string{"a.test/home", "www.a.test/home", "b.test/home", "c.test/home"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			purgeTenants(t, o, tt.purge, tt.gone...)
		})
	}
}

// The ramjet purge command with a site token purges that site only.
func TestPurgeCommandWithASiteToken(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", sitesYAML))
	c := newClient(t)
	ns := nsFor(t)
	ids := cacheTenantPages(t, c, rj, ns)
	code, out, res, err := runPurgeCLI(t, "--admin", rj.AdminURL, "--token", tokenA, "--all")
	if code != 0 || err != nil || !res.All {
		t.Fatalf("ramjet purge --all with a site token: exit %d, %+v (%v); output:\n%s", code, res, err, out)
	}
	code, out, _, _ = runPurgeCLI(t, "--admin", rj.AdminURL, "--token", tokenA, "--url", tenantPages["post"].uri(ns), "--host", "c.test")
	if code == 0 || !strings.Contains(out, "403") {
		t.Fatalf("ramjet purge of another site's URL with a site token: exit %d, want a refusal with 403; output:\n%s", code, out)
	}
	checkTenantFates(t, c, rj, ns, ids, "a.test/*", "www.a.test/*")
}

// Across two nodes, a site's purge travels with its scope: every node
// applies it to that site only.
func TestFanoutKeepsTheSiteScope(t *testing.T) {
	t.Parallel()
	redis := testbed.StartRedis(t)
	o := startOrigin(t)
	c := newClient(t)
	cfg := testbed.WriteConfig(t, "", sitesYAML)
	var nodes []*testbed.Ramjet
	for i := range 2 {
		nodes = append(nodes, startRamjet(t, o.URL, "--config", cfg, "--redis", redis.URL, "--node", fmt.Sprintf("node%d", i+1)))
	}
	for i, rj := range nodes {
		waitRedisState(t, c, rj, 10*time.Second, fmt.Sprintf("of node%d at start", i+1), func(s string) bool { return s == "connected" })
	}
	tests := []struct {
		name  string
		purge func(t *testing.T, ns string)
		gone  []string
	}{
		{name: "response-header-star-on-node1", purge: func(t *testing.T, ns string) {
			r := get(t, c, nodes[0].URL+"/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: *"), "Host: b.test")
			mustStatus(t, r, http.StatusOK, "b.test's purging page")
		}, gone: []string{"b.test/*"}},
		{name: "site-token-tag-on-node1", purge: func(t *testing.T, ns string) {
			r := adminPost(t, c, nodes[0], "tag=home", "", "", "Authorization: Bearer "+tokenA)
			mustStatus(t, r, http.StatusOK, "a.test's token purge")
		}, gone: []string{"a.test/home", "www.a.test/home"}},
		{name: "operator-tag-on-node1", purge: func(t *testing.T, ns string) {
			r := adminPost(t, c, nodes[0], "tag=post-1", "", "", "Authorization: Bearer "+operatorToken)
			mustStatus(t, r, http.StatusOK, "the operator's purge")
		}, gone: []string{"a.test/post", "www.a.test/post", "b.test/post", "c.test/post"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nsFor(t)
			ids := make([]tenantSet, len(nodes))
			for i, rj := range nodes {
				ids[i] = cacheTenantPages(t, c, rj, ns)
			}
			tt.purge(t, ns)
			// node2 got the purge through Redis: wait until one page it
			// must lose is gone (that GET refills it: from then on it is
			// kept), then check every page.
			gone2 := tt.gone
			if len(tt.gone) > 0 {
				key := tt.gone[0]
				host, name, _ := strings.Cut(key, "/")
				if name == "*" {
					name, key = "home", host+"/home"
				}
				r, _, ok := awaitChange(t, c, nodes[1].URL+tenantPages[name].uri(ns), ids[1][key], 2*time.Second, "Host: "+host)
				if !ok {
					t.Fatalf("node2: %s still a fresh hit 2s after the purge on node1", key)
				}
				mustMissStored(t, r, "node2: "+key+" after the purge")
				ids[1][key] = r.ID()
				gone2 = nil
				for _, g := range expandGone(tt.gone) {
					if g != key {
						gone2 = append(gone2, g)
					}
				}
			}
			checkTenantFates(t, c, nodes[0], ns, ids[0], tt.gone...)
			t.Run("node2", func(t *testing.T) { checkTenantFates(t, c, nodes[1], ns, ids[1], gone2...) })
		})
	}
}

// A site with its own cache_size keeps its pages there, and /metrics
// counts every site apart.
func TestSiteMetricsAndOwnCache(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", sitesYAML))
	c := newClient(t)
	ns := nsFor(t)
	cacheTenantPages(t, c, rj, ns)
	for i := range 60 { // 6MB through b.test's 4MiB
		get(t, c, rj.URL+"/e/"+ns+"/crawl-"+fmt.Sprint(i)+"?size=102400&"+hq("Cache-Control: max-age=300"), "Host: b.test")
	}
	r := get(t, c, rj.URL+"/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: tag=nothing"), "Host: c.test")
	mustStatus(t, r, http.StatusOK, "c.test's purging page")

	want := map[string]float64{
		`ramjet_site_hits_total{site="a.test"}`:   4, // a.test and www.a.test, two pages each
		`ramjet_site_misses_total{site="a.test"}`: 4,
		`ramjet_site_hits_total{site="c.test"}`:   2,
		`ramjet_site_purges_total{site="c.test"}`: 1,
		`ramjet_site_purges_total{site="a.test"}`: 0,
	}
	for series, v := range want {
		if got, ok := metric(t, c, rj, series, operatorAuth); !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, v)
		}
	}
	if got, _ := metric(t, c, rj, `ramjet_site_cache_objects{site="a.test"}`, operatorAuth); got < 4 {
		t.Errorf(`ramjet_site_cache_objects{site="a.test"} = %v, want its 4 pages`, got)
	}
	if got, _ := metric(t, c, rj, `ramjet_site_cache_bytes{site="b.test"}`, operatorAuth); got <= 0 || got > 4<<20 {
		t.Errorf(`ramjet_site_cache_bytes{site="b.test"} = %v, want some, within its 4MiB cache_size`, got)
	}
	// a.test's pages lived through b.test's crawl.
	for _, name := range []string{"home", "post"} {
		mustFreshHit(t, get(t, c, rj.URL+tenantPages[name].uri(ns), "Host: a.test"), "a.test "+name+" after b.test's crawl")
	}
}
