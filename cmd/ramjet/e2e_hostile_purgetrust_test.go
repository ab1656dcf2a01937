package main_test

// End-to-end tests of who may purge on a shared host: every tenant's PHP
// runs on loopback, so a trusted address alone purges only the sites that
// have no token; the admin API answers only its own names and origin, so
// a page in a browser cannot drive it; and Redis fan-out entries are
// signed, so whoever can write to Redis cannot purge the nodes.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

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

const (
	fanoutKeyOld = "fanout-key-old-0123456789"
	fanoutKeyNew = "fanout-key-new-0123456789"
)

// keyedCluster starts Redis, an origin and two nodes whose config files
// (one directory each, so that each reloads on its own) hold keys.
func keyedCluster(t *testing.T, keys ...string) (*cluster, []string) {
	t.Helper()
	cl := &cluster{redis: testbed.StartRedis(t), origin: startOrigin(t), c: newClient(t)}
	var dirs []string
	for i := range 2 {
		dir := t.TempDir()
		cfg := testbed.WriteConfig(t, dir, keysYAML(keys...))
		cl.nodes = append(cl.nodes, startRamjet(t, cl.origin.URL, "--config", cfg, "--redis", cl.redis.URL, "--node", fmt.Sprintf("node%d", i+1)))
		dirs = append(dirs, dir)
	}
	for i, rj := range cl.nodes {
		waitRedisState(t, cl.c, rj, 10*time.Second, fmt.Sprintf("of node%d at start", i+1), func(s string) bool { return s == "connected" })
	}
	return cl, dirs
}

func keysYAML(keys ...string) string {
	return "purge:\n  redis_keys: [" + strings.Join(keys, ", ") + "]\n"
}

// fence is a page cached on every node, for a purge from one node to
// prove that another has read everything published before it.
type fence struct {
	p   page
	ids []string
}

func (cl *cluster) cacheFence(t *testing.T, ns, name string) fence {
	t.Helper()
	p := page{path: name, tags: []string{ns + "-" + name}}
	return fence{p: p, ids: cl.cacheOnAll(t, ns, p)}
}

// purgeReaches purges f's tag through node from and waits until node to
// no longer serves it.
func (cl *cluster) purgeReaches(t *testing.T, ns string, f fence, from, to int) {
	t.Helper()
	mustStatus(t, adminPost(t, cl.c, cl.nodes[from], "tag="+f.p.tags[0], "", ""), http.StatusOK, "admin purge")
	if _, _, ok := awaitChange(t, cl.c, cl.nodes[to].URL+f.p.uri(ns), f.ids[to], 5*time.Second, siteHost); !ok {
		t.Fatalf("node%d's purge of %s did not reach node%d", from+1, f.p.path, to+1)
	}
}

// survives caches a page on every node, lets intrude add entries to the
// stream behind the nodes' backs, proves with a signed purge each way
// that every node has read past them, and checks that the page is still
// served from every cache.
func (cl *cluster) survives(t *testing.T, ns string, intrude func()) {
	t.Helper()
	bystander := page{path: "bystander", tags: []string{ns + "-kept"}}
	ids := cl.cacheOnAll(t, ns, bystander)
	to1, to0 := cl.cacheFence(t, ns, "to1"), cl.cacheFence(t, ns, "to0")
	intrude()
	cl.purgeReaches(t, ns, to1, 0, 1)
	cl.purgeReaches(t, ns, to0, 1, 0)
	for i, rj := range cl.nodes {
		mustFate(t, cl.c, rj.URL+bystander.uri(ns), ids[i], kept, fmt.Sprintf("node%d: a page no signed purge named since it was cached", i+1), siteHost)
	}
}

// counted checks a counter of every node.
func (cl *cluster) counted(t *testing.T, series string, want float64) {
	t.Helper()
	for i, rj := range cl.nodes {
		if v, _ := metric(t, cl.c, rj, series); v != want {
			t.Errorf("node%d: %s %v, want %v", i+1, series, v, want)
		}
	}
}

// Whoever can write to Redis (a tenant's PHP, with Redis on loopback and
// no password) but lacks the keys purges nothing: its entries are counted
// and logged, no node flushes, and the signed purges after them still
// arrive.
func TestFanoutIgnoresForgedEntries(t *testing.T) {
	t.Parallel()
	cl, _ := keyedCluster(t, fanoutKeyOld)
	everything := `{"targets":[{"kind":6}]}`
	cl.survives(t, nsFor(t), func() {
		cl.redis.Do(t, "XADD", "ramjet:purge", "*", "node", "intruder", "cmd", everything, "ts", "1")
		cl.redis.Do(t, "XADD", "ramjet:purge", "*", "node", "node1", "cmd", everything, "ts", "1", "mac", strings.Repeat("ab", 32))
	})
	cl.counted(t, "ramjet_purge_fanout_unverified_total", 2)
	for i, rj := range cl.nodes {
		out := rj.Output()
		if strings.Contains(out, "flushed the whole cache") {
			t.Errorf("node%d flushed its cache because of forged entries:\n%s", i+1, out)
		}
		if !strings.Contains(out, "ignored an entry") {
			t.Errorf("node%d did not log the forged entries:\n%s", i+1, out)
		}
	}
}

// The README's rotation, one config reload at a time on each node, loses
// no purge in either direction at any step.
func TestFanoutKeyRotationByReloadLosesNoPurge(t *testing.T) {
	t.Parallel()
	cl, dirs := keyedCluster(t, fanoutKeyOld)
	ns := nsFor(t)
	steps := [][]string{
		{fanoutKeyOld, fanoutKeyNew}, // 1. the new key second, everywhere
		{fanoutKeyNew, fanoutKeyOld}, // 2. the new key first, everywhere
		{fanoutKeyNew},               // 3. the old key gone, everywhere
	}
	for s, keys := range steps {
		for i, rj := range cl.nodes {
			from := len(rj.Output())
			testbed.WriteConfig(t, dirs[i], keysYAML(keys...))
			rj.WaitOutput(t, from, "config reloaded", 10*time.Second)
			// Half the nodes are on this step, half on the one before.
			at := fmt.Sprintf("s%dn%d-", s, i)
			to1, to0 := cl.cacheFence(t, ns, at+"to1"), cl.cacheFence(t, ns, at+"to0")
			cl.purgeReaches(t, ns, to1, 0, 1)
			cl.purgeReaches(t, ns, to0, 1, 0)
		}
	}
	cl.counted(t, "ramjet_purge_fanout_unverified_total", 0)
	// The reloads took effect: node2 with a key node1 does not have
	// ignores node1's purges.
	from := len(cl.nodes[1].Output())
	testbed.WriteConfig(t, dirs[1], keysYAML("fanout-key-other-0123456789"))
	cl.nodes[1].WaitOutput(t, from, "config reloaded", 10*time.Second)
	f := cl.cacheFence(t, ns, "after")
	mustStatus(t, adminPost(t, cl.c, cl.nodes[0], "tag="+f.p.tags[0], "", ""), http.StatusOK, "admin purge")
	cl.nodes[1].WaitOutput(t, from, "ignored an entry", 5*time.Second)
	mustFate(t, cl.c, cl.nodes[1].URL+f.p.uri(ns), f.ids[1], kept, "node2, keyed apart: node1's purge", siteHost)
}

// The admin listener without a token takes any local caller, a browser
// on the host too: a page whose name rebinds to 127.0.0.1 gets 421 for
// its Host, a form another page posts gets 403, and nothing is purged;
// the CLI, curl-like clients and configured names keep working.
func TestAdminRefusesRequestsABrowserSendsForAnotherPage(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "admin:\n  names: [ramjet.internal]\n"))
	c := newClient(t)
	ns := nsFor(t)
	_, port, _ := strings.Cut(rj.AdminAddr, ":")
	rebound := "Host: attacker.example:" + port
	form := "application/x-www-form-urlencoded"
	refused := []struct {
		name   string
		status int
		send   func() result
	}{
		{"rebound-name-purges", http.StatusMisdirectedRequest, func() result { return adminPost(t, c, rj, "", form, "all=1", rebound) }},
		{"rebound-name-reads-metrics", http.StatusMisdirectedRequest, func() result { return get(t, c, rj.AdminURL+"/metrics", rebound) }},
		{"rebound-name-reads-php-status", http.StatusMisdirectedRequest, func() result { return get(t, c, rj.AdminURL+"/php/status", rebound) }},
		{"form-from-another-origin", http.StatusForbidden, func() result {
			return adminPost(t, c, rj, "", form, "all=1", "Origin: http://attacker.example")
		}},
		{"form-from-the-main-listeners-origin", http.StatusForbidden, func() result {
			return adminPost(t, c, rj, "", form, "all=1", "Origin: "+rj.URL)
		}},
		{"cross-site-fetch", http.StatusForbidden, func() result {
			return adminPost(t, c, rj, "", form, "all=1", "Sec-Fetch-Site: cross-site")
		}},
		{"reopen-logs-from-another-origin", http.StatusForbidden, func() result {
			r, err := tryDo(c, http.MethodPost, rj.AdminURL+"/reopen-logs", nil, "Origin: http://attacker.example")
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
	}
	ids := cachePages(t, c, rj.URL, ns, []string{"a", "c"})
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			if r := tt.send(); r.Status != tt.status {
				t.Errorf("status %d, want %d; body %.200q", r.Status, tt.status, r.Body)
			}
		})
	}
	checkFates(t, c, rj.URL, ns, ids, fates([]string{"a", "c"}, nil, nil))

	t.Run("own-origin-and-configured-name", func(t *testing.T) {
		mustStatus(t, get(t, c, rj.AdminURL+"/healthz", "Host: ramjet.internal:"+port), http.StatusOK, "/healthz by a configured name")
		mustStatus(t, get(t, c, rj.AdminURL+"/healthz", "Host: localhost:"+port), http.StatusOK, "/healthz by localhost")
		r := adminPost(t, c, rj, "", form, "tag=t2", "Origin: "+rj.AdminURL)
		mustStatus(t, r, http.StatusOK, "a form from the admin listener's own origin")
	})
	t.Run("cli", func(t *testing.T) {
		code, out, res, err := runPurgeCLI(t, "--admin", rj.AdminURL, "--tag", "t1")
		if code != 0 || err != nil || res.Tags != 1 {
			t.Fatalf("ramjet purge --tag t1: exit %d, %+v (%v); output:\n%s", code, res, err, out)
		}
	})
	checkFates(t, c, rj.URL, ns, ids, fates([]string{"a", "c"}, []string{"a", "c"}, nil))
}

// A node fanning out without keys works as before, and says at start that
// its entries are unsigned.
func TestFanoutWithoutKeysWarnsAtStart(t *testing.T) {
	t.Parallel()
	redis := testbed.StartRedis(t)
	rj := startRamjet(t, "", "--redis", redis.URL, "--node", "node1")
	rj.WaitOutput(t, 0, "purge.redis_keys not set", 10*time.Second)
}

// Whoever can write to Redis and copies a signed purge of everything into
// the stream again does not flush the nodes again: the copies are
// skipped and counted.
func TestFanoutSkipsCopiesOfASignedPurge(t *testing.T) {
	t.Parallel()
	cl, _ := keyedCluster(t, fanoutKeyOld)
	ns := nsFor(t)
	mustStatus(t, adminPost(t, cl.c, cl.nodes[0], "all=1", "", ""), http.StatusOK, "the operator's purge of everything")
	// Published, then applied by node2, before anything is cached again.
	var last string
	if !testbed.Poll(5*time.Second, func() bool {
		last = cl.redis.Do(t, "XREVRANGE", "ramjet:purge", "+", "-", "COUNT", "1")
		v, _ := metric(t, cl.c, cl.nodes[1], "ramjet_purge_fanout_applied_total")
		return strings.Contains(last, `"kind":6`) && v == 1
	}) {
		t.Fatalf("the purge of everything was not published and applied; the last entry: %q", last)
	}
	entry := strings.Split(last, "\n") // id, then field and value lines
	cl.survives(t, ns, func() {
		for range 2 {
			cl.redis.Do(t, append([]string{"XADD", "ramjet:purge", "*"}, entry[1:]...)...)
		}
	})
	cl.counted(t, "ramjet_purge_fanout_copies_total", 2)
}
