package main_test

// End-to-end tests of purging through the built binary: purge headers on
// origin responses, the admin purge API and its CLI, PURGE and REFRESH on
// the main listener, and the Redis Streams fan-out across three nodes in
// front of one origin.

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// ---------------------------------------------------------------------------
// Pages

// page is a cacheable echo.php page: /e/<ns>/<path>, fresh for five
// minutes, carrying tags in X-LiteSpeed-Tag, with extra query appended.
type page struct {
	path  string
	tags  []string
	extra string
}

// uri is the page's path and query under namespace ns (one per test, so
// tests sharing an origin never share a URL).
func (p page) uri(ns string) string {
	h := []string{"Cache-Control: max-age=300"}
	if len(p.tags) > 0 {
		h = append(h, "X-LiteSpeed-Tag: "+strings.Join(p.tags, ", "))
	}
	u := "/e/" + ns + "/" + p.path + "?" + hq(h...)
	if p.extra != "" {
		u += "&" + p.extra
	}
	return u
}

// The pages of the single-node tables. a2 shares a's path with another
// query; p1 and p2 are under /pfx/, q only shares the string "pfx".
var purgePages = map[string]page{
	"a":  {path: "pa", tags: []string{"t1", "shared"}},
	"a2": {path: "pa", extra: "v=2"},
	"b":  {path: "pb", tags: []string{"t1x"}},
	"c":  {path: "pc", tags: []string{"t2"}},
	"d":  {path: "pd", tags: []string{"u1", "shared"}},
	"e":  {path: "pe", tags: []string{"x-u1"}},
	"p1": {path: "pfx/one"},
	"p2": {path: "pfx/two"},
	"q":  {path: "pfxq"},
}

var (
	tagPages = []string{"a", "b", "c", "d", "e"}         // for tag and wildcard cases
	urlPages = []string{"a", "a2", "c", "p1", "p2", "q"} // for URL and prefix cases
)

// expand replaces {name} with the URI of that page in ns, so a table can
// name a page's URL before the namespace is known.
func expand(s, ns string) string {
	for name, p := range purgePages {
		s = strings.ReplaceAll(s, "{"+name+"}", p.uri(ns))
	}
	return s
}

// nsFor turns a test name into a path segment.
func nsFor(t testing.TB) string {
	return strings.NewReplacer("/", "-", " ", "-", "#", "-").Replace(strings.ToLower(t.Name()))
}

// cachePages GETs each page twice through base (a stored miss, then a
// fresh hit of the same body) and returns each page's body id.
func cachePages(t testing.TB, c *http.Client, base, ns string, names []string, hdr ...string) map[string]string {
	t.Helper()
	ids := make(map[string]string, len(names))
	for _, name := range names {
		u := base + purgePages[name].uri(ns)
		first := get(t, c, u, hdr...)
		mustMissStored(t, first, "caching page "+name)
		second := get(t, c, u, hdr...)
		mustFreshHit(t, second, "page "+name+" once cached")
		if first.ID() == "" || second.ID() != first.ID() {
			t.Fatalf("page %s: hit id %q, want the stored %q", name, second.ID(), first.ID())
		}
		ids[name] = first.ID()
	}
	return ids
}

// fate is what a purge should have done to a page.
type fate string

const (
	kept fate = "kept" // still a fresh hit of the same body
	hard fate = "hard" // gone: a stored miss with a new body
	soft fate = "soft" // stale: served once more while one request refreshes it
)

// fates maps every name in names to its fate: those in hardNames are hard,
// those in softNames soft, the rest kept.
func fates(names, hardNames, softNames []string) map[string]fate {
	m := make(map[string]fate, len(names))
	for _, n := range names {
		m[n] = kept
	}
	for _, n := range hardNames {
		m[n] = hard
	}
	for _, n := range softNames {
		m[n] = soft
	}
	return m
}

// checkFates checks every page in ids against want, each in a subtest so
// one wrong page does not hide the others.
func checkFates(t *testing.T, c *http.Client, base, ns string, ids map[string]string, want map[string]fate, hdr ...string) {
	t.Helper()
	for _, name := range sortedKeys(want) {
		t.Run("page-"+name+"-"+string(want[name]), func(t *testing.T) {
			mustFate(t, c, base+purgePages[name].uri(ns), ids[name], want[name], "page "+name, hdr...)
		})
	}
}

func sortedKeys(m map[string]fate) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ { // insertion sort: a handful of keys
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// mustFate GETs u once (twice for hard, until refreshed for soft) and
// checks that the page, whose body id was old, met fate f.
func mustFate(t testing.TB, c *http.Client, u, old string, f fate, what string, hdr ...string) {
	t.Helper()
	r := get(t, c, u, hdr...)
	switch f {
	case kept:
		mustFreshHit(t, r, what+" (must not be purged)")
		if r.ID() != old {
			t.Fatalf("%s (must not be purged): body id %q, want the cached %q", what, r.ID(), old)
		}
	case hard:
		mustMissStored(t, r, what+" after a hard purge")
		if r.ID() == old {
			t.Fatalf("%s after a hard purge: got the purged body %q", what, old)
		}
		again := get(t, c, u, hdr...)
		mustFreshHit(t, again, what+" refilled after the purge")
		if again.ID() != r.ID() {
			t.Fatalf("%s refilled after the purge: body id %q, want the refilled %q", what, again.ID(), r.ID())
		}
	case soft:
		mustStaleHit(t, r, old, what+" after a soft purge")
		mustRefreshed(t, c, u, old, what, hdr...)
	default:
		t.Fatalf("unknown fate %q", f)
	}
}

// mustStaleHit fails unless r is the stale copy (body id old) served while
// it is refreshed.
func mustStaleHit(t testing.TB, r result, old, what string) {
	t.Helper()
	mustStatus(t, r, http.StatusOK, what)
	if cs := r.CacheStatus(); cs.Cache != "ramjet" || !cs.Hit || cs.Fwd != "stale" {
		t.Fatalf("%s: Cache-Status %q, want ramjet; hit; fwd=stale", what, cs.Raw)
	}
	if r.ID() != old {
		t.Fatalf("%s: body id %q, want the stale copy %q", what, r.ID(), old)
	}
}

// mustRefreshed polls u (up to 3 s) until it is a fresh hit with a body
// other than old; meanwhile only the stale copy may be served.
func mustRefreshed(t testing.TB, c *http.Client, u, old, what string, hdr ...string) {
	t.Helper()
	var last result
	var odd []string
	ok := testbed.Poll(3*time.Second, func() bool {
		last = get(t, c, u, hdr...)
		cs := last.CacheStatus()
		if cs.FreshHit() && last.ID() != "" && last.ID() != old {
			return true
		}
		if !(cs.Hit && cs.Fwd == "stale" && last.ID() == old) && len(odd) < 5 {
			odd = append(odd, fmt.Sprintf("%d %q id %q", last.Status, cs.Raw, last.ID()))
		}
		return false
	})
	if !ok {
		t.Fatalf("%s: not refreshed within 3 s after a soft purge; last Cache-Status %q id %q (stale id %q)", what, last.Header.Get("Cache-Status"), last.ID(), old)
	}
	if len(odd) > 0 {
		t.Errorf("%s: while refreshing, got responses other than the stale copy: %s", what, strings.Join(odd, "; "))
	}
}

// purgeHeaderNames are the response headers that carry purges; none may
// reach a client.
var purgeHeaderNames = []string{"X-LiteSpeed-Purge", "X-LiteSpeed-Purge2", "Cache-Group-Invalidation"}

func mustNotLeakPurgeHeaders(t testing.TB, r result, what string) {
	t.Helper()
	for _, name := range purgeHeaderNames {
		if v := r.Header.Values(name); len(v) > 0 {
			t.Errorf("%s: %s %q reached the client, want it stripped", what, name, v)
		}
	}
}

// ---------------------------------------------------------------------------
// Admin API, CLI, health and metrics helpers

// purgeCounts is purge.Result as JSON.
type purgeCounts struct {
	Tags     int  `json:"tags"`
	URLs     int  `json:"urls"`
	Prefixes int  `json:"prefixes"`
	All      bool `json:"all"`
}

// purgeAnswer is the JSON body of an accepted purge (admin API, PURGE).
type purgeAnswer struct {
	Purged purgeCounts `json:"purged"`
	Soft   bool        `json:"soft"`
}

func decodeAnswer(t testing.TB, r result, what string) purgeAnswer {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	var a purgeAnswer
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("%s: body %q is not {\"purged\":{...},\"soft\":...}: %v", what, r.Body, err)
	}
	return a
}

// adminPost POSTs to the admin /purge with query appended to the URL and
// body sent with contentType (none when empty).
func adminPost(t testing.TB, c *http.Client, rj *testbed.Ramjet, query, contentType, body string, hdr ...string) result {
	t.Helper()
	u := rj.AdminURL + "/purge"
	if query != "" {
		u += "?" + query
	}
	if contentType != "" {
		hdr = append(hdr, "Content-Type: "+contentType)
	}
	r, err := tryDo(c, http.MethodPost, u, strings.NewReader(body), hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// healthz is the admin /healthz body.
type healthz struct {
	Status string `json:"status"`
	Redis  string `json:"redis"`
}

func getHealth(t testing.TB, c *http.Client, rj *testbed.Ramjet) (int, healthz) {
	t.Helper()
	r := get(t, c, rj.AdminURL+"/healthz")
	var h healthz
	if err := json.Unmarshal(r.Body, &h); err != nil {
		t.Fatalf("/healthz body %q is not JSON: %v", r.Body, err)
	}
	return r.Status, h
}

// waitRedisState polls /healthz (up to d) until want(redis state) holds;
// every answer on the way must be 200 with status ok.
func waitRedisState(t testing.TB, c *http.Client, rj *testbed.Ramjet, d time.Duration, what string, want func(string) bool) {
	t.Helper()
	var last healthz
	ok := testbed.Poll(d, func() bool {
		code, h := getHealth(t, c, rj)
		if code != http.StatusOK || h.Status != "ok" {
			t.Fatalf("/healthz %s: status %d %+v, want 200 with status ok whatever Redis does", what, code, h)
		}
		last = h
		return want(h.Redis)
	})
	if !ok {
		t.Fatalf("/healthz %s: redis %q after %v", what, last.Redis, d)
	}
}

// metric returns the value of the sample whose name (with labels) is
// exactly series, and whether it exists.
func metric(t testing.TB, c *http.Client, rj *testbed.Ramjet, series string, hdr ...string) (float64, bool) {
	t.Helper()
	r := get(t, c, rj.AdminURL+"/metrics", hdr...)
	mustStatus(t, r, http.StatusOK, "GET /metrics")
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), series+" ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			t.Fatalf("metric %s: value %q: %v", series, v, err)
		}
		return f, true
	}
	return 0, false
}

// runPurgeCLI runs `ramjet purge` and returns its exit code, its output and
// the Result JSON on its last line (zero when there is none).
func runPurgeCLI(t testing.TB, args ...string) (int, string, purgeCounts, error) {
	t.Helper()
	code, out := testbed.RunRamjet(t, 15*time.Second, append([]string{"purge"}, args...)...)
	var res purgeCounts
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	dec := json.NewDecoder(strings.NewReader(last))
	dec.DisallowUnknownFields()
	return code, out, res, dec.Decode(&res)
}

// ---------------------------------------------------------------------------
// Single node: purge headers on origin responses

func TestPurgeByResponseHeader(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	tests := []struct {
		name    string
		headers []string // purge headers on a later, unrelated origin response ({x} = URL of page x)
		method  string   // of the purging request; GET when empty
		status  int      // of the purging response; 200 when 0
		hard    []string // pages that must be gone
		soft    []string // pages that must be stale
	}{
		{name: "tag-explicit", headers: []string{"X-LiteSpeed-Purge: tag=t1"}, hard: []string{"a"}},
		{name: "tag-bare-list", headers: []string{"X-LiteSpeed-Purge: t1, t2"}, hard: []string{"a", "c"}, method: http.MethodPost},
		{name: "tag-explicit-list", headers: []string{"X-LiteSpeed-Purge: tag=t1, tag=t2"}, hard: []string{"a", "c"}},
		{name: "tag-on-several-entries", headers: []string{"X-LiteSpeed-Purge: shared"}, hard: []string{"a", "d"}},
		{name: "public-group", headers: []string{"X-LiteSpeed-Purge: public, t2"}, hard: []string{"c"}},
		{name: "all-star", headers: []string{"X-LiteSpeed-Purge: *"}, hard: tagPages, status: http.StatusFound},
		{name: "all-tag-star", headers: []string{"X-LiteSpeed-Purge: tag=*"}, hard: tagPages},
		{name: "url-item", headers: []string{"X-LiteSpeed-Purge: {a}"}, hard: []string{"a"}},
		{name: "url-and-tag-items", headers: []string{"X-LiteSpeed-Purge: {b}, tag=t2"}, hard: []string{"b", "c"}},
		{name: "stale-group", headers: []string{"X-LiteSpeed-Purge: public, stale, t1"}, soft: []string{"a"}},
		{name: "stale-group-tags", headers: []string{"X-LiteSpeed-Purge: stale, tag=t1, tag=t2"}, soft: []string{"a", "c"}},
		{name: "stale-all", headers: []string{"X-LiteSpeed-Purge: stale, *"}, soft: tagPages},
		{name: "item-soft-tilde-s", headers: []string{"X-LiteSpeed-Purge: t1~s, t2"}, soft: []string{"a"}, hard: []string{"c"}},
		{name: "item-soft-tilde-stale", headers: []string{"X-LiteSpeed-Purge: tag=t2~stale"}, soft: []string{"c"}},
		{name: "tag-prefix-wildcard", headers: []string{"X-LiteSpeed-Purge: t1*"}, hard: []string{"a", "b"}},
		{name: "tag-prefix-wildcard-all-t", headers: []string{"X-LiteSpeed-Purge: t*"}, hard: []string{"a", "b", "c"}, status: http.StatusNotFound},
		{name: "tag-suffix-wildcard", headers: []string{"X-LiteSpeed-Purge: *u1"}, hard: []string{"d", "e"}},
		{name: "soft-prefix-wildcard", headers: []string{"X-LiteSpeed-Purge: tag=u*~s"}, soft: []string{"d"}},
		{name: "groups", headers: []string{"X-LiteSpeed-Purge: t1; stale, t2"}, hard: []string{"a"}, soft: []string{"c"}},
		{name: "purge2", headers: []string{"X-LiteSpeed-Purge2: t2"}, hard: []string{"c"}},
		{name: "purge-and-purge2", headers: []string{"X-LiteSpeed-Purge: t1", "X-LiteSpeed-Purge2: u1"}, hard: []string{"a", "d"}},
		{name: "private-touches-nothing", headers: []string{"X-LiteSpeed-Purge: private, t1"}},
		{name: "private-all-touches-nothing", headers: []string{"X-LiteSpeed-Purge: private, *"}},
		{name: "unknown-tag-touches-nothing", headers: []string{"X-LiteSpeed-Purge: t3, tag=t"}},
		{name: "malformed-items-skipped", headers: []string{"X-LiteSpeed-Purge: *t1*, t2"}, hard: []string{"c"}},
		{name: "cache-group-invalidation", headers: []string{"Cache-Group-Invalidation: t1, t2"}, hard: []string{"a", "c"}, method: http.MethodPost},
		{name: "cache-group-invalidation-spaces", headers: []string{"Cache-Group-Invalidation: t2 u1"}, hard: []string{"c", "d"}},
		{name: "cache-group-invalidation-star-is-a-tag", headers: []string{"Cache-Group-Invalidation: *, t1*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rj := startRamjet(t, o.URL)
			c := newClient(t)
			ns := nsFor(t)
			ids := cachePages(t, c, rj.URL, ns, tagPages)

			hdrs := make([]string, len(tt.headers))
			for i, h := range tt.headers {
				hdrs[i] = expand(h, ns)
			}
			q := hq(hdrs...)
			status := http.StatusOK
			if tt.status != 0 {
				status = tt.status
				q += "&status=" + strconv.Itoa(tt.status)
			}
			method := cmp.Or(tt.method, http.MethodGet)
			r := do(t, c, method, rj.URL+"/e/"+ns+"/purger?"+q)
			mustStatus(t, r, status, method+" of the purging page")
			mustNotLeakPurgeHeaders(t, r, "purging response")
			if cs := r.CacheStatus(); cs.Stored {
				t.Errorf("purging response: Cache-Status %q, want it not stored (no freshness)", cs.Raw)
			}
			checkFates(t, c, rj.URL, ns, ids, fates(tagPages, tt.hard, tt.soft))
		})
	}
}

// Purges in a response header run before that response is stored: a
// cacheable response that purges its own tag removes the older pages with
// that tag and is itself stored and served as a hit.
func TestPurgeHeaderAppliedBeforeStore(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	ns := nsFor(t)
	older := page{path: "older", tags: []string{"self"}}
	o1 := get(t, c, rj.URL+older.uri(ns))
	mustMissStored(t, o1, "older page tagged self")

	purger := rj.URL + "/e/" + ns + "/purger?" + hq("Cache-Control: max-age=300", "X-LiteSpeed-Tag: self", "X-LiteSpeed-Purge: tag=self")
	p1 := get(t, c, purger)
	mustMissStored(t, p1, "cacheable page tagged self purging tag self")
	mustNotLeakPurgeHeaders(t, p1, "cacheable purging page (miss)")
	mustFate(t, c, rj.URL+older.uri(ns), o1.ID(), hard, "older page tagged self")
	p2 := get(t, c, purger)
	mustFreshHit(t, p2, "cacheable purging page after its own purge (stored after the purge ran)")
	if p2.ID() != p1.ID() {
		t.Errorf("purging page: hit id %q, want the stored %q", p2.ID(), p1.ID())
	}
	mustNotLeakPurgeHeaders(t, p2, "cacheable purging page (hit)")
}

// A stored response keeps no purge header: serving it from cache purges
// nothing (a hit is not an origin response) and leaks nothing.
func TestPurgeHeaderNotReplayedFromCache(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	ns := nsFor(t)
	purger := rj.URL + "/e/" + ns + "/purger?" + hq("Cache-Control: max-age=300", "X-LiteSpeed-Purge: tag=r1", "Cache-Group-Invalidation: r2")
	p1 := get(t, c, purger)
	mustMissStored(t, p1, "cacheable purging page")
	mustNotLeakPurgeHeaders(t, p1, "cacheable purging page (miss)")

	// Pages tagged r1 and r2 cached after the purge; hits of the purging
	// page must leave them alone.
	r1 := page{path: "r1", tags: []string{"r1"}}
	r2 := page{path: "r2", tags: []string{"r2"}}
	x1 := get(t, c, rj.URL+r1.uri(ns))
	mustMissStored(t, x1, "page tagged r1")
	x2 := get(t, c, rj.URL+r2.uri(ns))
	mustMissStored(t, x2, "page tagged r2")
	for i := range 3 {
		h := get(t, c, purger)
		mustFreshHit(t, h, fmt.Sprintf("purging page hit %d", i+1))
		mustNotLeakPurgeHeaders(t, h, "cacheable purging page (hit)")
	}
	mustFate(t, c, rj.URL+r1.uri(ns), x1.ID(), kept, "page tagged r1")
	mustFate(t, c, rj.URL+r2.uri(ns), x2.ID(), kept, "page tagged r2")
}

// A soft purge serves the stale copy to everyone while exactly one request
// refreshes it: no thundering herd on the origin.
func TestSoftPurgeRefreshesOnce(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "")
	ns := nsFor(t)
	slow := page{path: "slow", tags: []string{"slow"}, extra: "sleep_ms=400"}
	u := rj.URL + slow.uri(ns)
	first := get(t, c, u)
	mustMissStored(t, first, "slow page")
	mustFreshHit(t, get(t, c, u), "slow page")

	a := decodeAnswer(t, adminPost(t, c, rj, "tag=slow&soft=1", "", ""), "soft purge")
	if a.Purged.Tags != 1 || !a.Soft {
		t.Fatalf("soft purge answered %+v, want tags 1 and soft", a)
	}
	results := parallelGet(t, c, 20, u)
	stale := 0
	for i, r := range results {
		cs := r.CacheStatus()
		switch {
		case cs.Hit && cs.Fwd == "stale" && r.ID() == first.ID():
			stale++
		case cs.FreshHit() && r.ID() != first.ID():
		default:
			t.Errorf("request %d after a soft purge: status %d Cache-Status %q id %q, want the stale copy %q or the refreshed one", i, r.Status, cs.Raw, r.ID(), first.ID())
		}
	}
	if stale == 0 {
		t.Errorf("no request got the stale copy after a soft purge")
	}
	mustRefreshed(t, c, u, first.ID(), "slow page")
	// ramjet counts a background refresh as it starts it, before it asks
	// the origin: a second one would show here at once, where nginx logs
	// it only after the page's 400 ms. The one refresh that did run is
	// seen through the same counter.
	if n, ok := metric(t, c, rj, "ramjet_background_refreshes_total"); n != 1 {
		t.Errorf("ramjet_background_refreshes_total %v (present %v), want 1: one refresh for 20 requests", n, ok)
	}
	path := "/e/" + ns + "/slow"
	if n := o.waitRequests(t, path, 2); n != 2 {
		t.Errorf("origin saw %d requests for the slow page, want 2 (the fill and one refresh)", n)
	}
}

// ---------------------------------------------------------------------------
// Single node: admin API

func TestPurgeAdminAPI(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	tests := []struct {
		name        string
		query       string // {a} = URL of page a, {host} = ramjet's host:port, {base} = http://host:port
		contentType string
		body        string
		want        purgeAnswer
		hard, soft  []string
	}{
		{name: "form-tags", contentType: "application/x-www-form-urlencoded", body: "tag=t2&tag=shared",
			want: purgeAnswer{Purged: purgeCounts{Tags: 2}}, hard: []string{"a", "c"}},
		{name: "query-tag", query: "tag=t2", want: purgeAnswer{Purged: purgeCounts{Tags: 1}}, hard: []string{"c"}},
		{name: "unknown-tag", query: "tag=nope", want: purgeAnswer{Purged: purgeCounts{Tags: 0}}},
		{name: "json-tags", contentType: "application/json", body: `{"tags":["t1"]}`,
			want: purgeAnswer{Purged: purgeCounts{Tags: 1}}, hard: []string{"a"}},
		{name: "url-path-with-host", contentType: "application/x-www-form-urlencoded", body: "url={a}&host={host}",
			want: purgeAnswer{Purged: purgeCounts{URLs: 1}}, hard: []string{"a"}},
		{name: "url-path-any-host", contentType: "application/x-www-form-urlencoded", body: "url={a}",
			want: purgeAnswer{Purged: purgeCounts{URLs: 1}}, hard: []string{"a"}},
		{name: "url-absolute", contentType: "application/json", body: `{"urls":["{base}{c}"]}`,
			want: purgeAnswer{Purged: purgeCounts{URLs: 1}}, hard: []string{"c"}},
		{name: "url-other-host", contentType: "application/json", body: `{"urls":["{c}"],"host":"other.example"}`,
			want: purgeAnswer{Purged: purgeCounts{URLs: 0}}},
		{name: "prefix", query: "prefix=/e/{ns}/pfx/",
			want: purgeAnswer{Purged: purgeCounts{Prefixes: 2}}, hard: []string{"p1", "p2"}},
		{name: "prefix-with-host", contentType: "application/json", body: `{"prefixes":["/e/{ns}/pfx"],"host":"{host}"}`,
			want: purgeAnswer{Purged: purgeCounts{Prefixes: 3}}, hard: []string{"p1", "p2", "q"}},
		{name: "all", query: "all=1", want: purgeAnswer{Purged: purgeCounts{All: true}}, hard: urlPages},
		{name: "soft-tag", contentType: "application/x-www-form-urlencoded", body: "tag=t2&soft=1",
			want: purgeAnswer{Purged: purgeCounts{Tags: 1}, Soft: true}, soft: []string{"c"}},
		{name: "soft-url-json", contentType: "application/json", body: `{"urls":["{a}"],"soft":true,"host":"{host}"}`,
			want: purgeAnswer{Purged: purgeCounts{URLs: 1}, Soft: true}, soft: []string{"a"}},
		{name: "soft-all-json", contentType: "application/json", body: `{"all":true,"soft":true}`,
			want: purgeAnswer{Purged: purgeCounts{All: true}, Soft: true}, soft: urlPages},
		{name: "mixed", contentType: "application/json", body: `{"tags":["t2"],"urls":["{a2}"],"prefixes":["/e/{ns}/pfx/one"],"host":"{host}"}`,
			want: purgeAnswer{Purged: purgeCounts{Tags: 1, URLs: 1, Prefixes: 1}}, hard: []string{"c", "a2", "p1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rj := startRamjet(t, o.URL)
			c := newClient(t)
			ns := nsFor(t)
			ids := cachePages(t, c, rj.URL, ns, urlPages)

			fill := func(s string, escape func(string) string) string {
				s = strings.NewReplacer("{host}", rj.Addr, "{base}", rj.URL, "{ns}", ns).Replace(s)
				for name, p := range purgePages {
					s = strings.ReplaceAll(s, "{"+name+"}", escape(p.uri(ns)))
				}
				return s
			}
			body := tt.body
			switch tt.contentType {
			case "application/json":
				body = fill(body, func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) })
			default:
				body = fill(body, url.QueryEscape)
			}
			query := fill(tt.query, url.QueryEscape)
			r := adminPost(t, c, rj, query, tt.contentType, body)
			mustStatus(t, r, http.StatusOK, "POST /purge "+query+" "+body)
			if got := decodeAnswer(t, r, "POST /purge"); got != tt.want {
				t.Errorf("POST /purge answered %+v, want %+v", got, tt.want)
			}
			checkFates(t, c, rj.URL, ns, ids, fates(urlPages, tt.hard, tt.soft))
		})
	}
}

// Refused admin purges answer 401, 403, 405 or 400 and purge nothing.
func TestPurgeAdminAPIRefused(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	const token = "s3cret-token"
	withToken := startRamjet(t, o.URL, "--admin-token", token)
	farAllow := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "purge:\n  admin_allow: [\"10.0.0.0/8\"]\n"))
	farAllowToken := startRamjet(t, o.URL, "--admin-token", token,
		"--config", testbed.WriteConfig(t, "", "purge:\n  admin_allow: [\"10.0.0.0/8\"]\n"))
	open := startRamjet(t, o.URL)
	c := newClient(t)

	tests := []struct {
		name   string
		rj     *testbed.Ramjet
		method string
		query  string
		ct     string
		body   string
		hdr    []string
		status int
	}{
		{name: "no-token", rj: withToken, query: "tag=t1", status: http.StatusUnauthorized},
		{name: "wrong-token", rj: withToken, query: "tag=t1", hdr: []string{"Authorization: Bearer wrong"}, status: http.StatusUnauthorized},
		{name: "token-prefix", rj: withToken, query: "tag=t1", hdr: []string{"Authorization: Bearer " + token[:4]}, status: http.StatusUnauthorized},
		{name: "basic-scheme", rj: withToken, query: "tag=t1", hdr: []string{"Authorization: Basic " + token}, status: http.StatusUnauthorized},
		{name: "token-in-query", rj: withToken, query: "tag=t1&token=" + token, status: http.StatusUnauthorized},
		{name: "client-not-allowed", rj: farAllow, query: "tag=t1", status: http.StatusForbidden},
		{name: "client-not-allowed-with-token", rj: farAllowToken, query: "tag=t1", hdr: []string{"Authorization: Bearer " + token}, status: http.StatusForbidden},
		{name: "get", rj: open, method: http.MethodGet, query: "tag=t1", status: http.StatusMethodNotAllowed},
		{name: "nothing-to-purge", rj: open, status: http.StatusBadRequest},
		{name: "unknown-field", rj: open, query: "tags=t1", status: http.StatusBadRequest},
		{name: "bad-boolean", rj: open, query: "tag=t1&soft=maybe", status: http.StatusBadRequest},
		{name: "json-unknown-field", rj: open, ct: "application/json", body: `{"tag":["t1"]}`, status: http.StatusBadRequest},
		{name: "json-not-json", rj: open, ct: "application/json", body: `{"tags":`, status: http.StatusBadRequest},
		{name: "url-not-a-path", rj: open, query: "url=e/x", status: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nsFor(t)
			ids := cachePages(t, c, tt.rj.URL, ns, []string{"a"})
			method := cmp.Or(tt.method, http.MethodPost)
			u := tt.rj.AdminURL + "/purge?" + tt.query
			hdr := tt.hdr
			if tt.ct != "" {
				hdr = append(hdr, "Content-Type: "+tt.ct)
			}
			r, err := tryDo(c, method, u, strings.NewReader(tt.body), hdr...)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.status {
				t.Errorf("%s %s: status %d, want %d; body %q", method, u, r.Status, tt.status, r.Body)
			}
			if bytes.Contains(r.Body, []byte(`"purged"`)) {
				t.Errorf("refused purge answered as accepted: %q", r.Body)
			}
			if tt.status == http.StatusUnauthorized && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer (got %q)", r.Header.Get("WWW-Authenticate"))
			}
			mustFate(t, c, tt.rj.URL+purgePages["a"].uri(ns), ids["a"], kept, "page a after a refused purge")
		})
	}
	t.Run("right-token", func(t *testing.T) {
		ns := nsFor(t)
		ids := cachePages(t, c, withToken.URL, ns, []string{"a"})
		r := adminPost(t, c, withToken, "tag=t1", "", "", "Authorization: Bearer "+token)
		mustStatus(t, r, http.StatusOK, "POST /purge with the token")
		if a := decodeAnswer(t, r, "POST /purge with the token"); a.Purged.Tags != 1 {
			t.Errorf("answer %+v, want tags 1", a)
		}
		mustFate(t, c, withToken.URL+purgePages["a"].uri(ns), ids["a"], hard, "page a")
	})
}

// ---------------------------------------------------------------------------
// Single node: PURGE and REFRESH on the main listener

func TestPurgeMethodFromTrustedClient(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	tests := []struct {
		name       string
		method     string
		target     string // request URI; {x} = URL of page x
		hdr        []string
		want       purgeAnswer
		hard, soft []string
	}{
		{name: "purge-url", method: "PURGE", target: "{a}", want: purgeAnswer{Purged: purgeCounts{URLs: 1}}, hard: []string{"a"}},
		{name: "purge-url-not-cached", method: "PURGE", target: "/e/nothing-here", want: purgeAnswer{Purged: purgeCounts{URLs: 0}}},
		{name: "refresh-url", method: "REFRESH", target: "{c}", want: purgeAnswer{Purged: purgeCounts{URLs: 1}, Soft: true}, soft: []string{"c"}},
		{name: "purge-surrogate-keys", method: "PURGE", target: "{b}", hdr: []string{"Surrogate-Key: t1 t2"},
			want: purgeAnswer{Purged: purgeCounts{Tags: 2}}, hard: []string{"a", "c"}},
		{name: "purge-cache-tag", method: "PURGE", target: "/", hdr: []string{"Cache-Tag: u1"},
			want: purgeAnswer{Purged: purgeCounts{Tags: 1}}, hard: []string{"d"}},
		{name: "purge-litespeed-header", method: "PURGE", target: "{b}", hdr: []string{"X-LiteSpeed-Purge: tag=t2"},
			want: purgeAnswer{Purged: purgeCounts{Tags: 1}}, hard: []string{"c"}},
		{name: "refresh-surrogate-key", method: "REFRESH", target: "/", hdr: []string{"Surrogate-Key: shared"},
			want: purgeAnswer{Purged: purgeCounts{Tags: 1}, Soft: true}, soft: []string{"a", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rj := startRamjet(t, o.URL)
			c := newClient(t)
			ns := nsFor(t)
			ids := cachePages(t, c, rj.URL, ns, tagPages)
			r := do(t, c, tt.method, rj.URL+expand(tt.target, ns), tt.hdr...)
			mustStatus(t, r, http.StatusOK, tt.method)
			if got := decodeAnswer(t, r, tt.method); got != tt.want {
				t.Errorf("%s answered %+v, want %+v", tt.method, got, tt.want)
			}
			checkFates(t, c, rj.URL, ns, ids, fates(tagPages, tt.hard, tt.soft))
		})
	}
}

func TestPurgeMethodFromUntrustedClientRefused(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, "", "purge:\n  trusted: [\"10.0.0.0/8\"]\n"))
	c := newClient(t)
	tests := []struct {
		name   string
		method string
		target string
		hdr    []string
	}{
		{"purge-url", "PURGE", "{a}", nil},
		{"refresh-url", "REFRESH", "{a}", nil},
		{"purge-surrogate-key", "PURGE", "/", []string{"Surrogate-Key: t1 t2"}},
		{"refresh-litespeed-header", "REFRESH", "/", []string{"X-LiteSpeed-Purge: *"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nsFor(t)
			ids := cachePages(t, c, rj.URL, ns, []string{"a", "c"})
			r := do(t, c, tt.method, rj.URL+expand(tt.target, ns), tt.hdr...)
			if r.Status != http.StatusMethodNotAllowed {
				t.Errorf("%s from 127.0.0.1 with trusted 10.0.0.0/8: status %d, want 405; body %q", tt.method, r.Status, r.Body)
			}
			if bytes.Contains(r.Body, []byte(`"purged"`)) {
				t.Errorf("refused %s answered as a purge: %q", tt.method, r.Body)
			}
			checkFates(t, c, rj.URL, ns, ids, fates([]string{"a", "c"}, nil, nil))
		})
	}
	// A refused PURGE is not forwarded to the origin either.
	ns := nsFor(t)
	r := do(t, c, "PURGE", rj.URL+"/e/"+ns+"/fwd?mark="+ns)
	if r.Status != http.StatusMethodNotAllowed {
		t.Errorf("PURGE: status %d, want 405", r.Status)
	}
	// A GET through the same ramjet and origin leaves its mark: marks are
	// seen, and the refused PURGE, answered before it, would have left
	// its own by then.
	probe := ns + "-probe"
	mustStatus(t, get(t, c, rj.URL+"/e/"+ns+"/probe?mark="+probe), http.StatusOK, "probe GET")
	if !o.marked(probe) {
		t.Fatalf("the probe GET left no mark")
	}
	if o.marked(ns) {
		t.Errorf("a refused PURGE reached the origin")
	}
}

// ---------------------------------------------------------------------------
// Single node: CLI

func TestPurgeCommand(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	const token = "cli-token"
	tests := []struct {
		name       string
		args       []string // after --admin URL; {host} = ramjet host:port, {ns} namespace, {x} URL of page x
		token      string   // --token; the node's token when "."
		code       int
		want       purgeCounts
		hard, soft []string
	}{
		{name: "tags", args: []string{"--tag", "t2", "--tag", "shared"}, token: ".", want: purgeCounts{Tags: 2}, hard: []string{"a", "c"}},
		{name: "url-with-host", args: []string{"--url", "{a}", "--host", "{host}"}, token: ".", want: purgeCounts{URLs: 1}, hard: []string{"a"}},
		{name: "url-absolute", args: []string{"--url", "http://{host}{a2}"}, token: ".", want: purgeCounts{URLs: 1}, hard: []string{"a2"}},
		{name: "prefix", args: []string{"--prefix", "/e/{ns}/pfx/"}, token: ".", want: purgeCounts{Prefixes: 2}, hard: []string{"p1", "p2"}},
		{name: "all", args: []string{"--all"}, token: ".", want: purgeCounts{All: true}, hard: urlPages},
		{name: "soft-tag", args: []string{"--tag", "t2", "--soft"}, token: ".", want: purgeCounts{Tags: 1}, soft: []string{"c"}},
		{name: "no-token", args: []string{"--tag", "t2"}, code: 1},
		{name: "wrong-token", args: []string{"--tag", "t2"}, token: "nope", code: 1},
		{name: "nothing-to-purge", token: ".", code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rj := startRamjet(t, o.URL, "--admin-token", token)
			c := newClient(t)
			ns := nsFor(t)
			ids := cachePages(t, c, rj.URL, ns, urlPages)
			args := []string{"--admin", rj.AdminURL}
			switch tt.token {
			case "":
			case ".":
				args = append(args, "--token", token)
			default:
				args = append(args, "--token", tt.token)
			}
			for _, a := range tt.args {
				args = append(args, expand(strings.NewReplacer("{host}", rj.Addr, "{ns}", ns).Replace(a), ns))
			}
			code, out, got, jsonErr := runPurgeCLI(t, args...)
			if code != tt.code {
				t.Fatalf("ramjet purge %s: exit %d, want %d; output:\n%s", strings.Join(args, " "), code, tt.code, out)
			}
			if tt.code == 0 {
				if jsonErr != nil {
					t.Errorf("ramjet purge: last output line is not the Result JSON (%v):\n%s", jsonErr, out)
				} else if got != tt.want {
					t.Errorf("ramjet purge printed %+v, want %+v", got, tt.want)
				}
			} else if tt.code == 1 && !strings.Contains(out, "401") {
				t.Errorf("refused ramjet purge: output does not give the 401:\n%s", out)
			}
			checkFates(t, c, rj.URL, ns, ids, fates(urlPages, tt.hard, tt.soft))
		})
	}
}

// ---------------------------------------------------------------------------
// Single node: metrics

func TestPurgeMetricsBySource(t *testing.T) {
	t.Parallel()
	_, rj, c := setup(t, "")
	ns := nsFor(t)
	ids := cachePages(t, c, rj.URL, ns, tagPages)

	r := get(t, c, rj.URL+"/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: t1"))
	mustStatus(t, r, http.StatusOK, "purging page")
	mustStatus(t, adminPost(t, c, rj, "tag=t2", "", ""), http.StatusOK, "admin purge")
	mustStatus(t, do(t, c, "PURGE", rj.URL+purgePages["b"].uri(ns)), http.StatusOK, "PURGE")
	mustStatus(t, do(t, c, "REFRESH", rj.URL+purgePages["d"].uri(ns)), http.StatusOK, "REFRESH")
	checkFates(t, c, rj.URL, ns, ids, fates(tagPages, []string{"a", "b", "c"}, []string{"d"}))

	for _, m := range []struct {
		series string
		want   float64
	}{
		{`ramjet_purges_total{source="header"}`, 1},
		{`ramjet_purges_total{source="api"}`, 1},
		{`ramjet_purges_total{source="method"}`, 2},
	} {
		got, ok := metric(t, c, rj, m.series)
		if !ok || got != m.want {
			t.Errorf("%s = %v (present %v), want %v", m.series, got, ok, m.want)
		}
	}
	if _, h := getHealth(t, c, rj); h.Status != "ok" || h.Redis == "connected" {
		t.Errorf("/healthz of a single node: %+v, want status ok and redis not connected", h)
	}
}

// ---------------------------------------------------------------------------
// Fan-out across three nodes

// siteHost is the Host every request to the cluster carries, as behind a
// load balancer: URL purges name it, whichever node they reach.
const siteHost = "Host: www.example.test"

type cluster struct {
	redis  *testbed.Redis
	origin *origin
	nodes  []*testbed.Ramjet
	c      *http.Client
}

// startCluster starts Redis, one origin and n nodes (node1..n) fanning
// purges out through Redis, and waits until every node reads the stream.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	return startClusterWith(t, n, "")
}

// startClusterWith is startCluster with config yaml (besides the flags)
// on every node.
func startClusterWith(t *testing.T, n int, yaml string) *cluster {
	t.Helper()
	cl := &cluster{redis: testbed.StartRedis(t), origin: startOrigin(t), c: newClient(t)}
	var cfg []string
	if yaml != "" {
		cfg = []string{"--config", testbed.WriteConfig(t, "", yaml)}
	}
	for i := range n {
		args := append([]string{"--redis", cl.redis.URL, "--node", fmt.Sprintf("node%d", i+1)}, cfg...)
		cl.nodes = append(cl.nodes, startRamjet(t, cl.origin.URL, args...))
	}
	for i, rj := range cl.nodes {
		waitRedisState(t, cl.c, rj, 10*time.Second, fmt.Sprintf("of node%d at start", i+1), func(s string) bool { return s == "connected" })
	}
	return cl
}

// cacheOnAll caches p on every node and returns its body id per node.
func (cl *cluster) cacheOnAll(t testing.TB, ns string, p page) []string {
	t.Helper()
	ids := make([]string, len(cl.nodes))
	for i, rj := range cl.nodes {
		u := rj.URL + p.uri(ns)
		first := get(t, cl.c, u, siteHost)
		mustMissStored(t, first, fmt.Sprintf("node%d: caching %s", i+1, p.path))
		second := get(t, cl.c, u, siteHost)
		mustFreshHit(t, second, fmt.Sprintf("node%d: %s once cached", i+1, p.path))
		if second.ID() != first.ID() {
			t.Fatalf("node%d: %s hit id %q, want %q", i+1, p.path, second.ID(), first.ID())
		}
		ids[i] = first.ID()
	}
	return ids
}

// awaitChange GETs u every 20 ms, for up to d, while it is a fresh hit of
// body old, and returns the first response that is not and when it came.
func awaitChange(t testing.TB, c *http.Client, u, old string, d time.Duration, hdr ...string) (result, time.Duration, bool) {
	t.Helper()
	start := time.Now()
	var last result
	ok := testbed.Poll(d, func() bool {
		last = get(t, c, u, hdr...)
		return !(last.CacheStatus().FreshHit() && last.ID() == old)
	})
	return last, time.Since(start), ok
}

func TestFanoutPurgeReachesEveryNode(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, 3)
	const bound = 2 * time.Second
	tests := []struct {
		name  string
		via   int // index of the node that takes the purge
		soft  bool
		purge func(t *testing.T, rj *testbed.Ramjet, ns string, target page)
	}{
		{name: "response-header-via-node1", via: 0, purge: func(t *testing.T, rj *testbed.Ramjet, ns string, target page) {
			r := get(t, cl.c, rj.URL+"/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: tag="+target.tags[0]), siteHost)
			mustStatus(t, r, http.StatusOK, "purging page")
			mustNotLeakPurgeHeaders(t, r, "purging page")
		}},
		{name: "admin-api-via-node2", via: 1, purge: func(t *testing.T, rj *testbed.Ramjet, ns string, target page) {
			r := adminPost(t, cl.c, rj, "tag="+target.tags[0], "", "")
			mustStatus(t, r, http.StatusOK, "admin purge")
		}},
		{name: "purge-method-url-via-node3", via: 2, purge: func(t *testing.T, rj *testbed.Ramjet, ns string, target page) {
			r := do(t, cl.c, "PURGE", rj.URL+target.uri(ns), siteHost)
			mustStatus(t, r, http.StatusOK, "PURGE")
			if a := decodeAnswer(t, r, "PURGE"); a.Purged.URLs != 1 {
				t.Errorf("PURGE answered %+v, want urls 1", a)
			}
		}},
		{name: "cache-group-invalidation-via-node3", via: 2, purge: func(t *testing.T, rj *testbed.Ramjet, ns string, target page) {
			r := do(t, cl.c, http.MethodPost, rj.URL+"/e/"+ns+"/purger?"+hq("Cache-Group-Invalidation: "+target.tags[0]), siteHost)
			mustStatus(t, r, http.StatusOK, "purging POST")
		}},
		{name: "cli-url-via-node1", via: 0, purge: func(t *testing.T, rj *testbed.Ramjet, ns string, target page) {
			code, out, res, err := runPurgeCLI(t, "--admin", rj.AdminURL, "--url", target.uri(ns), "--host", "www.example.test")
			if code != 0 || err != nil || res.URLs != 1 {
				t.Fatalf("ramjet purge --url: exit %d, result %+v (%v), want 0 and urls 1; output:\n%s", code, res, err, out)
			}
		}},
		{name: "soft-admin-api-via-node2", via: 1, soft: true, purge: func(t *testing.T, rj *testbed.Ramjet, ns string, target page) {
			r := adminPost(t, cl.c, rj, "", "application/json", `{"tags":["`+target.tags[0]+`"],"soft":true}`)
			mustStatus(t, r, http.StatusOK, "soft admin purge")
		}},
		{name: "soft-header-via-node3", via: 2, soft: true, purge: func(t *testing.T, rj *testbed.Ramjet, ns string, target page) {
			r := get(t, cl.c, rj.URL+"/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: stale, tag="+target.tags[0]), siteHost)
			mustStatus(t, r, http.StatusOK, "purging page")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nsFor(t)
			target := page{path: "target", tags: []string{ns + "-t"}}
			bystander := page{path: "bystander", tags: []string{ns + "-k"}}
			tIDs := cl.cacheOnAll(t, ns, target)
			bIDs := cl.cacheOnAll(t, ns, bystander)

			tt.purge(t, cl.nodes[tt.via], ns, target)
			f := hard
			if tt.soft {
				f = soft
			}
			// The node that took the purge applied it before answering.
			mustFate(t, cl.c, cl.nodes[tt.via].URL+target.uri(ns), tIDs[tt.via], f, fmt.Sprintf("node%d (took the purge): target", tt.via+1), siteHost)
			for i, rj := range cl.nodes {
				if i == tt.via {
					continue
				}
				u := rj.URL + target.uri(ns)
				r, took, ok := awaitChange(t, cl.c, u, tIDs[i], bound, siteHost)
				if !ok {
					t.Errorf("node%d: target still a fresh hit of the purged body %v after the purge on node%d", i+1, bound, tt.via+1)
					continue
				}
				t.Logf("node%d: purge arrived within %v", i+1, took.Round(time.Millisecond))
				what := fmt.Sprintf("node%d: target after the purge on node%d", i+1, tt.via+1)
				if tt.soft {
					mustStaleHit(t, r, tIDs[i], what)
					mustRefreshed(t, cl.c, u, tIDs[i], what, siteHost)
				} else {
					mustMissStored(t, r, what)
					if r.ID() == tIDs[i] {
						t.Errorf("%s: purged body %q served", what, r.ID())
					}
				}
			}
			// The purge was exact on every node: no flush, no wider purge.
			for i, rj := range cl.nodes {
				mustFate(t, cl.c, rj.URL+bystander.uri(ns), bIDs[i], kept, fmt.Sprintf("node%d: bystander", i+1), siteHost)
			}
		})
	}
	for i, rj := range cl.nodes {
		if strings.Contains(rj.Output(), "flushed the whole cache") {
			t.Errorf("node%d flushed its cache without any Redis trouble:\n%s", i+1, rj.Output())
		}
		if v, ok := metric(t, cl.c, rj, "ramjet_redis_connected"); !ok || v != 1 {
			t.Errorf("node%d: ramjet_redis_connected %v (present %v), want 1", i+1, v, ok)
		}
	}
}

// Redis dies; a purge taken by node 1 meanwhile applies there at once;
// Redis comes back empty on the same port; then no node serves the purged
// pages any more (the queued purges reach them through the new stream;
// until then the gap of the new instance serves them only stale).
func TestFanoutRedisRestartLosesNoPurge(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, 3)
	ns := nsFor(t)
	byTag := page{path: "by-tag", tags: []string{"outage-t"}}
	byURL := page{path: "by-url"}
	tagIDs := cl.cacheOnAll(t, ns, byTag)
	urlIDs := cl.cacheOnAll(t, ns, byURL)

	cl.redis.Kill()
	for i, rj := range cl.nodes {
		waitRedisState(t, cl.c, rj, 10*time.Second, fmt.Sprintf("of node%d with Redis down", i+1), func(s string) bool { return s != "connected" })
		if v, ok := metric(t, cl.c, rj, "ramjet_redis_connected"); !ok || v != 0 {
			t.Errorf("node%d with Redis down: ramjet_redis_connected %v (present %v), want 0", i+1, v, ok)
		}
	}

	// Purges during the outage, through node 1: a response header and the
	// admin API. Both apply on node 1 at once.
	n1 := cl.nodes[0]
	r := get(t, cl.c, n1.URL+"/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: tag=outage-t"), siteHost)
	mustStatus(t, r, http.StatusOK, "purging page during the outage")
	a := decodeAnswer(t, adminPost(t, cl.c, n1, "", "application/json", `{"urls":["`+byURL.uri(ns)+`"],"host":"www.example.test"}`), "admin purge during the outage")
	if a.Purged.URLs != 1 {
		t.Errorf("admin purge during the outage answered %+v, want urls 1", a)
	}
	mustFate(t, cl.c, n1.URL+byTag.uri(ns), tagIDs[0], hard, "node1 during the outage: page purged by tag", siteHost)
	mustFate(t, cl.c, n1.URL+byURL.uri(ns), urlIDs[0], hard, "node1 during the outage: page purged by URL", siteHost)
	for i, rj := range cl.nodes {
		code, h := getHealth(t, cl.c, rj)
		if code != http.StatusOK || h.Status != "ok" || h.Redis == "connected" {
			t.Errorf("node%d /healthz during the outage: %d %+v, want 200, status ok, redis not connected", i+1, code, h)
		}
	}

	cl.redis.Restart(t)
	for i, rj := range cl.nodes {
		waitRedisState(t, cl.c, rj, 10*time.Second, fmt.Sprintf("of node%d after Redis came back", i+1), func(s string) bool { return s == "connected" })
	}
	// Nodes 2 and 3 stop serving both purged pages within the bound.
	for i := 1; i < len(cl.nodes); i++ {
		for _, pg := range []struct {
			p   page
			old string
		}{{byTag, tagIDs[i]}, {byURL, urlIDs[i]}} {
			u := cl.nodes[i].URL + pg.p.uri(ns)
			took, ok := awaitPurged(t, cl.c, u, pg.old, 2*time.Second, siteHost)
			if !ok {
				t.Errorf("node%d: %s still serves the body purged during the outage 2 s after Redis reported connected", i+1, pg.p.path)
				continue
			}
			t.Logf("node%d: %s gone %v after the node reported Redis connected", i+1, pg.p.path, took.Round(time.Millisecond))
		}
	}
	// Nothing stale afterwards, on any node: the awaitChange above saw
	// each purge through these same GETs, and five rounds spread over a
	// quarter second (the sleep below is pacing) would show a purged body
	// coming back.
	for round := range 5 {
		for i, rj := range cl.nodes {
			for _, pg := range []struct {
				p   page
				old string
			}{{byTag, tagIDs[i]}, {byURL, urlIDs[i]}} {
				r := get(t, cl.c, rj.URL+pg.p.uri(ns), siteHost)
				if r.ID() == pg.old {
					t.Errorf("round %d: node%d served the purged body of %s after recovery (Cache-Status %q)", round, i+1, pg.p.path, r.Header.Get("Cache-Status"))
				}
			}
		}
		time.Sleep(50 * time.Millisecond) // pacing between rounds, not synchronisation
	}
	// Node 1 published what it queued during the outage.
	var xlen string
	if !testbed.Poll(5*time.Second, func() bool {
		xlen, _ = cl.redis.Query("XLEN", "ramjet:purge")
		n, _ := strconv.Atoi(xlen)
		return n >= 2
	}) {
		t.Errorf("stream ramjet:purge holds %q entries after recovery, want the 2 purges queued during the outage", xlen)
	}
	// The new instance has a new epoch: nodes that were reading noticed
	// the gap and said so, and flushed nothing.
	for i := 1; i < len(cl.nodes); i++ {
		if !strings.Contains(cl.nodes[i].Output(), "purge fan-out gap") {
			t.Errorf("node%d logged no gap after Redis restarted empty", i+1)
		}
		if v, ok := metric(t, cl.c, cl.nodes[i], `ramjet_purge_fanout_gaps_total{reason="epoch"}`); !ok || v < 1 {
			t.Errorf("node%d: epoch gaps %v (present %v), want >= 1", i+1, v, ok)
		}
		if v, _ := metric(t, cl.c, cl.nodes[i], "ramjet_purge_fanout_flushes_total"); v != 0 {
			t.Errorf("node%d flushed %v times; a gap marks stale", i+1, v)
		}
	}
}

// awaitPurged GETs u until it is no longer the body old (for up to d) and
// reports when; meanwhile old may only be served as a stale hit (a gap's
// grace), never as a fresh one.
func awaitPurged(t testing.TB, c *http.Client, u, old string, d time.Duration, hdr ...string) (time.Duration, bool) {
	t.Helper()
	start := time.Now()
	var fresh []string
	ok := testbed.Poll(d, func() bool {
		r := get(t, c, u, hdr...)
		if r.ID() != old {
			return r.Status == http.StatusOK
		}
		if cs := r.CacheStatus(); !(cs.Hit && cs.Fwd == "stale") && len(fresh) < 3 {
			fresh = append(fresh, r.Header.Get("Cache-Status"))
		}
		return false
	})
	if len(fresh) > 0 {
		t.Errorf("%s: the purged body was served other than stale: %v", u, fresh)
	}
	return time.Since(start), ok
}

// A node that cannot read the stream while entries it has not seen are
// trimmed away (here: stopped with SIGSTOP while the stream is trimmed to
// nothing) cannot know what it missed; under purge.gap: flush it flushes
// its whole cache, as before gaps were served stale; the nodes that kept
// up do not.
func TestFanoutTrimmedNodeFlushesUnderGapFlush(t *testing.T) {
	t.Parallel()
	cl := startClusterWith(t, 3, "purge:\n  gap: flush\n")
	ns := nsFor(t)
	target := page{path: "target", tags: []string{"trim-t"}}
	bystander := page{path: "bystander", tags: []string{"trim-k"}}
	tIDs := cl.cacheOnAll(t, ns, target)
	bIDs := cl.cacheOnAll(t, ns, bystander)

	n3 := cl.nodes[2]
	n3.Freeze(t)
	stopped := true
	resume := func() {
		if stopped {
			stopped = false
			n3.Thaw(t)
		}
	}
	t.Cleanup(resume) // runs before node3's own cleanup sends SIGTERM

	mustStatus(t, adminPost(t, cl.c, cl.nodes[0], "tag=trim-t", "", ""), http.StatusOK, "admin purge on node1")
	r, _, ok := awaitChange(t, cl.c, cl.nodes[1].URL+target.uri(ns), tIDs[1], 10*time.Second, siteHost)
	if !ok {
		t.Fatalf("node2 did not get the purge within 10 s")
	}
	mustMissStored(t, r, "node2: target after the purge")
	trimmed := cl.redis.Do(t, "XTRIM", "ramjet:purge", "MAXLEN", "0")
	if n, _ := strconv.Atoi(trimmed); n < 1 {
		t.Fatalf("XTRIM removed %q entries, want at least the purge", trimmed)
	}
	resume()

	r, took, ok := awaitChange(t, cl.c, n3.URL+target.uri(ns), tIDs[2], 20*time.Second, siteHost)
	if !ok {
		t.Fatalf("node3 still serves the purged target 20 s after it resumed")
	}
	t.Logf("node3: target gone %v after resuming", took.Round(time.Millisecond))
	mustMissStored(t, r, "node3: target after resuming")
	// A flush, not just the purge: the bystander is gone on node3 too.
	mustFate(t, cl.c, n3.URL+bystander.uri(ns), bIDs[2], hard, "node3: bystander after the flush", siteHost)
	if out := n3.Output(); !strings.Contains(out, "flush") || !strings.Contains(out, "trimmed") {
		t.Errorf("node3 did not log a flush for the trimmed stream:\n%s", out)
	}
	// Node 2 kept up: no gap, no flush.
	mustFate(t, cl.c, cl.nodes[1].URL+bystander.uri(ns), bIDs[1], kept, "node2: bystander", siteHost)
	mustFate(t, cl.c, cl.nodes[0].URL+bystander.uri(ns), bIDs[0], kept, "node1: bystander", siteHost)
	waitRedisState(t, cl.c, n3, 20*time.Second, "of node3 after resuming", func(s string) bool { return s == "connected" })
}

// Redis stops answering (SIGSTOP: connections hang, as on a network drop)
// while node 1 takes a purge: node 1 answers at once and applies it, keeps
// it queued while it cannot publish, and once Redis answers again the
// purge reaches nodes 2 and 3 as a purge, not as a flush (same instance,
// nothing trimmed).
func TestFanoutRedisPausedDeliversQueuedPurge(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, 3)
	ns := nsFor(t)
	target := page{path: "target", tags: []string{"pause-t"}}
	bystander := page{path: "bystander", tags: []string{"pause-k"}}
	tIDs := cl.cacheOnAll(t, ns, target)
	bIDs := cl.cacheOnAll(t, ns, bystander)

	cl.redis.Pause(t)
	paused := true
	resume := func() {
		if paused {
			paused = false
			cl.redis.Resume(t)
		}
	}
	t.Cleanup(resume)

	n1 := cl.nodes[0]
	start := time.Now()
	r := adminPost(t, cl.c, n1, "tag=pause-t", "", "")
	if took := time.Since(start); took > time.Second {
		t.Errorf("admin purge with Redis hanging took %v, want an answer without waiting for Redis", took)
	}
	mustStatus(t, r, http.StatusOK, "admin purge with Redis hanging")
	mustFate(t, cl.c, n1.URL+target.uri(ns), tIDs[0], hard, "node1 with Redis hanging: target", siteHost)
	// Node 1 notices it cannot publish (its Redis timeouts are 3 s).
	waitRedisState(t, cl.c, n1, 10*time.Second, "of node1 with Redis hanging", func(s string) bool { return s != "connected" })

	resume()
	for i := 1; i < len(cl.nodes); i++ {
		u := cl.nodes[i].URL + target.uri(ns)
		r, took, ok := awaitChange(t, cl.c, u, tIDs[i], 10*time.Second, siteHost)
		if !ok {
			t.Errorf("node%d: target still a fresh hit of the purged body 10 s after Redis answered again", i+1)
			continue
		}
		t.Logf("node%d: queued purge arrived %v after Redis answered again", i+1, took.Round(time.Millisecond))
		mustMissStored(t, r, fmt.Sprintf("node%d: target after Redis answered again", i+1))
	}
	for i, rj := range cl.nodes {
		waitRedisState(t, cl.c, rj, 10*time.Second, fmt.Sprintf("of node%d after Redis answered again", i+1), func(s string) bool { return s == "connected" })
		mustFate(t, cl.c, rj.URL+bystander.uri(ns), bIDs[i], kept, fmt.Sprintf("node%d: bystander (no flush needed)", i+1), siteHost)
		if strings.Contains(rj.Output(), "flushed the whole cache") {
			t.Errorf("node%d flushed its cache although Redis kept its stream:\n%s", i+1, rj.Output())
		}
	}
}
