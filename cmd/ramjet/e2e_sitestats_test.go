package main_test

// End-to-end tests of what a site's owner and the operator see of the
// cache: GET /stats on the admin listener, read with a site's token, and
// ramjet top in a terminal (tmux).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// statsReply is GET /stats's body.
type statsReply struct {
	Sites []struct {
		Site   string `json:"site"`
		Cached struct {
			Entries int64 `json:"entries"`
			Bytes   int64 `json:"bytes"`
		} `json:"cached"`
		Totals, Minute, Hour, Day statsCounts
		Uncached                  []struct {
			URL    string `json:"url"`
			Reason string `json:"reason"`
			Count  uint64 `json:"count"`
		} `json:"uncached"`
	} `json:"sites"`
}

type statsCounts struct {
	Requests   uint64  `json:"requests"`
	Hits       uint64  `json:"hits"`
	Misses     uint64  `json:"misses"`
	Passes     uint64  `json:"passes"`
	HitRatio   float64 `json:"hit_ratio"`
	Purges     uint64  `json:"purges"`
	WAFBlocked uint64  `json:"waf_blocked"`
	Errors     uint64  `json:"errors"`
	Origin     uint64  `json:"origin_requests"`
}

// getStats GETs the admin /stats?query with token; a 200 is decoded.
func getStats(t testing.TB, c *http.Client, rj *testbed.Ramjet, token, query string) (int, statsReply) {
	t.Helper()
	u := rj.AdminURL + "/stats"
	if query != "" {
		u += "?" + query
	}
	r := get(t, c, u, "Authorization: Bearer "+token)
	var s statsReply
	if r.Status == http.StatusOK {
		if err := json.Unmarshal(r.Body, &s); err != nil {
			t.Fatalf("GET %s: body %q is not the stats JSON: %v", u, r.Body, err)
		}
	}
	return r.Status, s
}

// siteTraffic is what the tests send to a.test: one cacheable page three
// times, and pages the cache may not keep, each with its reason.
type siteTraffic struct {
	page     string
	uncached map[string]string // URI → Cache-Status detail
}

func sendSiteTraffic(t *testing.T, c *http.Client, rj *testbed.Ramjet, ns string) siteTraffic {
	t.Helper()
	st := siteTraffic{page: "/e/" + ns + "/home?" + hq("Cache-Control: max-age=300"), uncached: map[string]string{
		"/e/" + ns + "/cart?" + hq("Cache-Control: max-age=300", "Set-Cookie: cart=1"): "set-cookie",
		"/e/" + ns + "/account?" + hq("Cache-Control: private, max-age=300"):           "private",
		"/e/" + ns + "/search?" + hq("Cache-Control: max-age=300", "Vary: *"):          "vary-star",
		"/e/" + ns + "/plain": "no-ttl",
	}}
	mustMissStored(t, get(t, c, rj.URL+st.page, "Host: a.test"), "a.test's page")
	for range 2 {
		mustFreshHit(t, get(t, c, rj.URL+st.page, "Host: a.test"), "a.test's page again")
	}
	for uri, reason := range st.uncached {
		r := get(t, c, rj.URL+uri, "Host: a.test")
		if cs := r.Header.Get("Cache-Status"); !strings.Contains(cs, "detail="+reason) {
			t.Fatalf("%s: Cache-Status %q, want detail=%s", uri, cs, reason)
		}
	}
	// The cart again: remembered uncacheable (hit-for-pass), a pass.
	for uri, reason := range st.uncached {
		if reason == "set-cookie" {
			r := get(t, c, rj.URL+uri, "Host: a.test")
			if cs := r.Header.Get("Cache-Status"); !strings.HasPrefix(cs, "ramjet; fwd=uri-miss") {
				t.Fatalf("%s again: Cache-Status %q, want fwd=uri-miss", uri, cs)
			}
		}
	}
	// A bypass cookie: passed uncached, counted against the same page.
	r := get(t, c, rj.URL+st.page, "Host: a.test", "Cookie: wordpress_logged_in_1=x")
	if cs := r.Header.Get("Cache-Status"); cs != "ramjet; fwd=bypass" {
		t.Fatalf("the page with a bypass cookie: Cache-Status %q, want ramjet; fwd=bypass", cs)
	}
	get(t, c, rj.URL+st.page, "Host: b.test") // b.test's own
	return st
}

// A site's token reads its own site's numbers and uncached URLs, which
// match the traffic sent, and is refused another site's; the operator's
// reads every site.
func TestSiteStatsForTheSitesOwner(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", sitesYAML))
	c := newClient(t)
	ns := nsFor(t)
	traffic := sendSiteTraffic(t, c, rj, ns)
	if r := adminPost(t, c, rj, "tag=home", "", "", "Authorization: Bearer "+tokenA); r.Status != http.StatusOK {
		t.Fatalf("a.test's purge: %d %s", r.Status, r.Body)
	}

	code, s := getStats(t, c, rj, tokenA, "")
	if code != http.StatusOK || len(s.Sites) != 1 || s.Sites[0].Site != "a.test" {
		t.Fatalf("GET /stats with a.test's token: %d, sites %+v; want a.test's alone", code, s.Sites)
	}
	a := s.Sites[0]
	// 3 GETs of the page (1 miss, 2 hits), 4 uncached pages, the cart
	// again (hit-for-pass), 1 bypass: each request counted once.
	want := statsCounts{Requests: 9, Hits: 2, Misses: 5, Passes: 2, HitRatio: 2.0 / 9, Purges: 1, Origin: 7}
	for name, got := range map[string]statsCounts{"totals": a.Totals, "minute": a.Minute, "hour": a.Hour, "day": a.Day} {
		if got != want {
			t.Errorf("a.test's %s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	listed := map[string]string{}
	for _, u := range a.Uncached {
		listed[u.URL] = u.Reason
	}
	for uri, reason := range traffic.uncached {
		if got := listed["http://a.test"+uri]; got != reason {
			t.Errorf("uncached list: %s has reason %q, want %q; list %+v", uri, got, reason, a.Uncached)
		}
	}
	if got := listed["http://a.test"+traffic.page]; got != "bypass" {
		t.Errorf("uncached list: the page with a bypass cookie has reason %q, want bypass; list %+v", got, a.Uncached)
	}
	if len(a.Uncached) != len(traffic.uncached)+1 {
		t.Errorf("uncached list has %d URLs, want %d: %+v", len(a.Uncached), len(traffic.uncached)+1, a.Uncached)
	}

	refusals := []struct {
		name, token, query string
		status             int
	}{
		{"another site's host", tokenA, "host=b.test", http.StatusForbidden},
		{"another site's host in capitals", tokenA, "host=B.TEST", http.StatusForbidden},
		{"a host no entry names", tokenA, "host=c.test", http.StatusForbidden},
		{"an unknown token", "tenant-c-guess", "", http.StatusUnauthorized},
		{"an unknown parameter", tokenA, "site=b.test", http.StatusBadRequest},
	}
	for _, tt := range refusals {
		if code, s := getStats(t, c, rj, tt.token, tt.query); code != tt.status {
			t.Errorf("%s: status %d (sites %+v), want %d", tt.name, code, s.Sites, tt.status)
		}
	}
	// A page on another name rebound to the admin address reads nothing.
	if r := get(t, c, rj.AdminURL+"/stats", "Authorization: Bearer "+tokenA, "Host: attacker.example"); r.Status != http.StatusMisdirectedRequest {
		t.Errorf("GET /stats with Host attacker.example: %d, want 421", r.Status)
	}
	if code, s := getStats(t, c, rj, tokenA, "host=www.a.test"); code != http.StatusOK || len(s.Sites) != 1 || s.Sites[0].Site != "a.test" {
		t.Errorf("a.test's token naming its other host: %d %+v, want a.test's stats", code, s.Sites)
	}
	if code, s := getStats(t, c, rj, tokenB, ""); code != http.StatusOK || len(s.Sites) != 1 || s.Sites[0].Totals.Requests != 1 {
		t.Errorf("b.test's token: %d %+v, want b.test's 1 request alone", code, s.Sites)
	}
	code, s = getStats(t, c, rj, operatorToken, "urls=0")
	sites := map[string]bool{}
	for _, site := range s.Sites {
		sites[site.Site] = true
		if site.Uncached != nil {
			t.Errorf("urls=0: %s lists %+v, want no list", site.Site, site.Uncached)
		}
	}
	if code != http.StatusOK || !sites["a.test"] || !sites["b.test"] || !sites["c.test"] {
		t.Errorf("the operator's token: %d, sites %v; want every site", code, sites)
	}
}

// tmuxTop is ramjet top running in a detached 80×24 tmux session of its
// own server (socket in a temporary directory).
type tmuxTop struct {
	t    *testing.T
	sock string
}

func startTmuxTop(t *testing.T, args ...string) *tmuxTop {
	t.Helper()
	tm := &tmuxTop{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := append([]string{testbed.Binary(t), "top"}, args...)
	tm.run("new-session", "-d", "-x", "80", "-y", "24", "-s", "top", strings.Join(cmd, " "))
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.sock, "kill-server").Run() }) //nolint:errcheck // gone already when top quit
	return tm
}

func (tm *tmuxTop) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the terminal shows now.
func (tm *tmuxTop) screen() string { return tm.run("capture-pane", "-p", "-t", "top") }

// waitScreen waits until ok holds for the screen.
func (tm *tmuxTop) waitScreen(what string, ok func(string) bool) string {
	tm.t.Helper()
	var s string
	if !testbed.Poll(15*time.Second, func() bool { s = tm.screen(); return ok(s) }) {
		tm.t.Fatalf("ramjet top never showed %s; the screen:\n%s", what, s)
	}
	return s
}

// topRow is the first row of the screen naming site, split in fields.
func topRow(screen, site string) []string {
	for _, l := range strings.Split(screen, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == site {
			return f
		}
	}
	return nil
}

// ramjet top in an 80×24 terminal shows each site's live request rate,
// hit ratio and PHP pools while load runs, re-sorts on a key and quits
// on q.
func TestTopShowsLiveSitesInATerminal(t *testing.T) {
	t.Parallel()
	root := phpDocroot(t)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  token: %s
defaults:
  docroot:
    root: %q
    php:
      workers: 2
hosts:
  - names: [a.test]
  - names: [b.test]
`, operatorToken, root))
	rj := startRamjet(t, "", "--config", cfg)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	load := func(host, path string, pause time.Duration) {
		defer wg.Done()
		c := newClient(t)
		for {
			select {
			case <-stop:
				return
			case <-time.After(pause):
			}
			if _, err := tryDo(c, http.MethodGet, rj.URL+path, nil, "Host: "+host); err != nil {
				t.Errorf("load on %s: %v", host, err)
				return
			}
		}
	}
	wg.Add(3)
	go load("a.test", "/cached.php?id=1", time.Millisecond)
	go load("a.test", "/sleep.php?ms=20", 5*time.Millisecond)
	go load("b.test", "/hello.php", 200*time.Millisecond)
	defer func() { close(stop); wg.Wait() }()

	tm := startTmuxTop(t, "--admin", rj.AdminURL, "--token", operatorToken)
	s := tm.waitScreen("a.test's requests per second and its PHP pool", func(s string) bool {
		a := topRow(s, "a.test")
		return len(a) == 6 && a[1] != "0.0" && strings.Contains(s, "PHP POOL") && strings.Contains(s, "sort req/s")
	})
	t.Logf("ramjet top under load:\n%s", s)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 24 || !strings.HasPrefix(lines[0], "ramjet top") || !strings.HasSuffix(strings.TrimSpace(lines[1]), "WAF/m") {
		t.Errorf("the view does not fit 80×24 (the header wrapped or scrolled):\n%s", s)
	}
	if first := topRow(s, "a.test"); !strings.HasSuffix(first[2], "%") {
		t.Errorf("a.test's row %q has no hit ratio", first)
	}
	if i, j := strings.Index(s, "\na.test"), strings.Index(s, "\nb.test"); i < 0 || j < 0 || i > j {
		t.Errorf("sorted by req/s, a.test (under load) is not above b.test:\n%s", s)
	}
	tm.run("send-keys", "-t", "top", "n")
	tm.waitScreen("the sites sorted by name", func(s string) bool {
		return strings.Contains(s, "sort site") && strings.Index(s, "\n_default") < strings.Index(s, "\na.test")
	})
	tm.run("send-keys", "-t", "top", "q")
	if !testbed.Poll(5*time.Second, func() bool { return exec.Command("tmux", "-S", tm.sock, "has-session", "-t", "top").Run() != nil }) {
		t.Fatalf("ramjet top still runs after q:\n%s", tm.screen())
	}
}

// dashboardMetrics lists the metric names the Grafana dashboard's queries
// (panels and template variables) name, by where they are used.
func dashboardMetrics(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string]string{}
	series := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{|label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if title, ok := v["title"].(string); ok {
				where = title
			}
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "query" || k == "definition") {
					for _, m := range series.FindAllStringSubmatch(s, -1) {
						names[m[1]+m[2]] = where
					}
				}
				walk(where, x)
			}
		case []any:
			for _, x := range v {
				walk(where, x)
			}
		}
	}
	walk("", dash)
	return names
}

// Every metric the shipped Grafana dashboard queries is one a running
// ramjet exports (with PHP pools and Redis fan-out, as an operator's
// would have): a renamed metric breaks this test, not a graph.
func TestGrafanaDashboardQueriesOnlyMetricsRamjetExports(t *testing.T) {
	t.Parallel()
	want := dashboardMetrics(t, "../../conf/grafana/ramjet.json")
	if len(want) < 20 {
		t.Fatalf("the dashboard queries %d metrics: %v", len(want), want)
	}
	redis := testbed.StartRedis(t)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  token: %s
defaults:
  docroot:
    root: %q
    php:
      workers: 1
hosts:
  - names: [a.test]
`, operatorToken, phpDocroot(t)))
	rj := startRamjet(t, "", "--config", cfg, "--redis", redis.URL)
	c := newClient(t)
	mustStatus(t, get(t, c, rj.URL+"/hello.php", "Host: a.test"), http.StatusOK, "a PHP page")
	r := get(t, c, rj.AdminURL+"/metrics", operatorAuth)
	mustStatus(t, r, http.StatusOK, "/metrics")
	have := map[string]bool{}
	for _, line := range strings.Split(string(r.Body), "\n") {
		if name := strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' }); len(name) > 0 && !strings.HasPrefix(line, "#") {
			have[name[0]] = true
		}
	}
	for name, panel := range want {
		if !have[name] {
			t.Errorf("panel %q queries %s, which /metrics does not have", panel, name)
		}
	}
}
