package main_test

// End-to-end tests of who may purge on a shared host: every tenant's PHP
// runs on loopback, so a trusted address alone purges only the sites that
// have no token; the admin API answers only its own names and origin, so
// a page in a browser cannot drive it; and Redis fan-out entries are
// signed, so whoever can write to Redis cannot purge the nodes.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// A PURGE from loopback (any tenant's PHP) reaches a site that has a
// token only with that token or the operator's, and every site at once
// only with the operator's.
func TestPurgeRequestNeedsTheSitesToken(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	// purgeAs sends PURGE with Surrogate-Key home to host with the
	// given token ("" none) and wants status.
	purgeAs := func(host, token string, status int) func(*testing.T, *testbed.Ramjet) {
		return func(t *testing.T, rj *testbed.Ramjet) {
			hdr := []string{"Host: " + host, "Surrogate-Key: home"}
			if token != "" {
				hdr = append(hdr, "Authorization: Bearer "+token)
			}
			r := do(t, newClient(t), "PURGE", rj.URL+"/", hdr...)
			if r.Status != status {
				t.Fatalf("PURGE to %s with token %q: status %d, want %d; body %q", host, token, r.Status, status, r.Body)
			}
			if status == http.StatusUnauthorized && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", r.Header.Get("WWW-Authenticate"))
			}
		}
	}
	// everySite sends PURGE without a Host (HTTP/1.0), which names no
	// site: X-LiteSpeed-Purge * would be every site's pages.
	everySite := func(token string, status int) func(*testing.T, *testbed.Ramjet) {
		return func(t *testing.T, rj *testbed.Ramjet) {
			req := "PURGE / HTTP/1.0\nX-LiteSpeed-Purge: *\n"
			if token != "" {
				req += "Authorization: Bearer " + token + "\n"
			}
			if r := rawRequest(t, rj.Addr, req+"\n"); r.Status != status {
				t.Fatalf("PURGE without a Host, token %q: status %d, want %d; body %q", token, r.Status, status, r.Body)
			}
		}
	}
	tests := []struct {
		name  string
		purge func(*testing.T, *testbed.Ramjet)
		gone  []string
	}{
		{name: "site-with-a-token-without-it", purge: purgeAs("b.test", "", http.StatusUnauthorized)},
		{name: "site-with-a-token-unknown-token", purge: purgeAs("b.test", "tenant-c-guess", http.StatusUnauthorized)},
		{name: "site-with-a-token-another-sites-token", purge: purgeAs("b.test", tokenA, http.StatusForbidden)},
		{name: "site-with-a-token-its-token", purge: purgeAs("b.test", tokenB, http.StatusOK), gone: []string{"b.test/home"}},
		{name: "site-with-a-token-operators-token", purge: purgeAs("www.a.test", operatorToken, http.StatusOK),
			gone: []string{"a.test/home", "www.a.test/home"}},
		{name: "site-without-a-token", purge: purgeAs("c.test", "", http.StatusOK), gone: []string{"c.test/home"}},
		{name: "every-site-without-the-operators-token", purge: everySite("", http.StatusUnauthorized)},
		{name: "every-site-with-a-sites-token", purge: everySite(tokenA, http.StatusForbidden)},
		{name: "every-site-with-the-operators-token", purge: everySite(operatorToken, http.StatusOK),
			gone: []string{"a.test/*", "www.a.test/*", "b.test/*", "c.test/*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			purgeTenants(t, o, func(t *testing.T, rj *testbed.Ramjet, _ string) { tt.purge(t, rj) }, tt.gone...)
		})
	}
}

// purgeTenants starts ramjet with the three sites of sitesYAML, caches
// their pages, runs purge and checks that exactly the pages gone lists
// ("site/page" or "site/*") were purged.
func purgeTenants(t *testing.T, o *origin, purge func(t *testing.T, rj *testbed.Ramjet, ns string), gone ...string) {
	t.Helper()
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", sitesYAML))
	c := newClient(t)
	ns := nsFor(t)
	ids := cacheTenantPages(t, c, rj, ns)
	purge(t, rj, ns)
	checkTenantFates(t, c, rj, ns, ids, gone...)
}
