package main_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// warmPage is a page of warm.php that takes sleepMS to make.
func warmPage(base string, p, sleepMS int) string {
	return fmt.Sprintf("%s/warm.php?sleep_ms=%d&p=%d", base, sleepMS, p)
}

// originConcurrency is the most requests warm.php had at once since the
// last reset.
func originConcurrency(t *testing.T, c *http.Client, o *origin, reset bool) int {
	t.Helper()
	q := "1"
	if reset {
		q = "reset"
	}
	r := get(t, c, o.URL+"/warm.php?conc="+q)
	var now, top int
	if _, err := fmt.Sscanf(string(r.Body), "%d %d", &now, &top); err != nil {
		t.Fatalf("warm.php?conc: %q: %v", r.Body, err)
	}
	return top
}

// waitWarmRuns waits for the warm-up's runs, counted once each has ended.
func waitWarmRuns(t *testing.T, rj *testbed.Ramjet, n float64) {
	t.Helper()
	if !testbed.Poll(20*time.Second, func() bool { return metricValue(t, rj.AdminURL, "ramjet_warm_runs_total") >= n }) {
		out := rj.Output()
		t.Errorf("no warm run ended within 20 s; ramjet's log ends:\n%s", out[max(0, len(out)-2000):])
	}
}

// After a purge of everything, the most requested pages are fetched
// again before any visitor asks — at most warm.concurrency at once at the
// origin, the least requested left to their visitors past max_entries —
// and a visitor meanwhile is answered without waiting for the warm-up.
func TestWarmUpAfterAPurgeOfEverythingMakesThePopularPagesHitsAgain(t *testing.T) {
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, "", "origin:\n  max_conns: 4\n"+
		"defaults:\n  warm:\n    enabled: true\n    concurrency: 2\n    rate: 1000\n    max_entries: 8\n    max_busy: 75\n")
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := newClient(t)
	const pages, warmed, sleepMS = 12, 8, 800
	before := map[int]string{}
	for p := range pages {
		for range p + 1 { // page p asked for p+1 times: the last ones are the most requested
			r := get(t, c, warmPage(rj.URL, p, sleepMS))
			mustStatus(t, r, 200, "filling the pages")
			before[p] = string(r.Body)
		}
	}
	originConcurrency(t, c, o, true)

	mustStatus(t, adminPost(t, c, rj, "all=1", "", ""), http.StatusOK, "purge of everything")
	start := time.Now()
	// The visitor's page is left out of the origin's count (uncounted):
	// the count is held to the warm-up's concurrency alone.
	visitor := get(t, c, warmPage(rj.URL, 100, 0)+"&uncounted=1")
	if took := time.Since(start); took >= sleepMS*time.Millisecond || !visitor.CacheStatus().Stored {
		t.Errorf("a visitor's miss during the warm-up took %v (%q): it waited behind the warm-up's %d ms pages",
			took, visitor.CacheStatus().Raw, sleepMS)
	}
	waitWarmRuns(t, rj, 1)

	if top := originConcurrency(t, c, o, false); top > 2 {
		t.Errorf("the origin had %d requests at once during the warm-up, want at most warm.concurrency 2", top)
	}
	for p := range pages {
		r := get(t, c, warmPage(rj.URL, p, sleepMS))
		cs := r.CacheStatus()
		switch {
		case p >= pages-warmed && (!cs.Hit || string(r.Body) == before[p]):
			t.Errorf("page %d (asked for %d times) after the purge: %q, want a hit of a copy fetched again", p, p+1, cs.Raw)
		case p < pages-warmed && cs.Hit:
			t.Errorf("page %d (asked for %d times, past max_entries) after the purge: a hit", p, p+1)
		}
	}
	if n := metricValue(t, rj.AdminURL, "ramjet_warm_fetches_total"); n != warmed {
		t.Errorf("ramjet_warm_fetches_total = %v, want %d", n, warmed)
	}
	if !strings.Contains(rj.Output(), "warm run") {
		t.Errorf("no log line for the warm run:\n%s", rj.Output())
	}
}

// A site whose warm-up is off (the default) leaves its purged pages to
// its visitors, beside one whose warm-up is on.
func TestWarmUpOffLeavesPurgedPagesToTheirVisitors(t *testing.T) {
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, "", "hosts:\n  - names: [on.test]\n    warm:\n      enabled: true\n  - names: [off.test]\n")
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := newClient(t)
	for _, host := range []string{"on.test", "off.test"} {
		for range 3 {
			mustStatus(t, get(t, c, warmPage(rj.URL, 1, 0), "Host: "+host), 200, "filling "+host)
		}
	}
	mustStatus(t, adminPost(t, c, rj, "all=1", "", ""), http.StatusOK, "purge of everything")
	waitWarmRuns(t, rj, 1)
	if r := get(t, c, warmPage(rj.URL, 1, 0), "Host: on.test"); !r.CacheStatus().Hit {
		t.Errorf("on.test's page after its warm-up: %q, want a hit", r.CacheStatus().Raw)
	}
	if r := get(t, c, warmPage(rj.URL, 1, 0), "Host: off.test"); r.CacheStatus().Hit {
		t.Errorf("off.test's page, warm-up off: %q, want a miss (nothing fetched it again)", r.CacheStatus().Raw)
	}
	if n := metricValue(t, rj.AdminURL, "ramjet_warm_candidates_total"); n != 1 {
		t.Errorf("ramjet_warm_candidates_total = %v, want 1 (on.test's page only)", n)
	}
}

// A purge by tag (O(1): it drops nothing until looked up) and a soft
// purge (stale copies) are warmed too, found by the scan after them: the
// tagged page a visitor asked for is a fresh hit of a copy fetched again,
// the page the tag does not name is left as it was.
func TestWarmUpAfterTagAndSoftPurgesMakesThePageFreshAgain(t *testing.T) {
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, "", "defaults:\n  warm:\n    enabled: true\n")
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := newClient(t)
	ns := nsFor(t)
	tagged := rj.URL + page{path: "tagged", tags: []string{"wt"}}.uri(ns)
	other := rj.URL + page{path: "other", tags: []string{"elsewhere"}}.uri(ns)
	ids := map[string]string{}
	for _, u := range []string{tagged, other} {
		for range 3 {
			ids[u] = get(t, c, u).ID()
		}
	}
	for i, purge := range []string{"tag=wt", "tag=wt&soft=1"} {
		mustStatus(t, adminPost(t, c, rj, purge, "", ""), http.StatusOK, purge)
		waitWarmRuns(t, rj, float64(i+1))
		r := get(t, c, tagged)
		if cs := r.CacheStatus(); !cs.FreshHit() || r.ID() == ids[tagged] {
			t.Errorf("the tagged page after %s and its warm-up: %q (id %s, before %s), want a fresh hit of a new copy",
				purge, cs.Raw, r.ID(), ids[tagged])
		}
		ids[tagged] = r.ID()
		if r := get(t, c, other); !r.CacheStatus().FreshHit() || r.ID() != ids[other] {
			t.Errorf("the page %s does not name after its warm-up: %q, want the same hit", purge, r.CacheStatus().Raw)
		}
	}
	if n := metricValue(t, rj.AdminURL, "ramjet_warm_fetches_total"); n != 2 {
		t.Errorf("ramjet_warm_fetches_total = %v, want 2 (the tagged page, twice)", n)
	}
}
