package main_test

// End-to-end tests of what ESI fragments get from going through the same
// request stages as pages: revalidation with 304, stale-if-error and
// their own counters, through the built binary and the real nginx +
// php-fpm origin. max-age=1 runs on the binary's clock, so the tests poll
// (bounded by ttlWait) until the fragment's state has changed.

import (
	"net/http"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// A fragment past its max-age is served stale while one background
// request revalidates it; the origin's 304 keeps the stored body.
func TestESIFragmentRevalidatedWith304(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "defaults:\n  grace: 30s\n")
	page := rj.URL + esiPage("", []string{incl("/esi/frag.php?name=rv&cc=short&etag=1")})
	first := get(t, c, page)
	mustIntactPage(t, first, 1, "first page")
	id := mustFrag(t, first, "rv", "first page").ID
	stores := metricAtLeast(t, c, rj, "ramjet_cache_stores_total", 2) // the page and its fragment
	pollPage(t, c, rj, page, `ramjet_esi_fragments_total{cache="stale"}`)
	metricAtLeast(t, c, rj, "ramjet_cache_stores_total", stores+1) // the revalidated fragment
	if n := o.loggedRequests(t, "/esi/frag.php"); n != 2 {
		t.Fatalf("origin saw %d fragment requests, want the fill and one revalidation", n)
	}
	again := get(t, c, page)
	mustIntactPage(t, again, 1, "page after the revalidation")
	if got := mustFrag(t, again, "rv", "page after the revalidation").ID; got != id {
		t.Fatalf("fragment %s after the revalidation, want the stored %s (a 200 would have made a new one)", got, id)
	}
	if n := o.loggedRequests(t, "/esi/frag.php"); n != 2 {
		t.Fatalf("origin saw %d fragment requests once the revalidated fragment was served, want still 2", n)
	}
}

// With no grace, a fragment past its max-age whose origin is down is
// served from its stale copy within stale-if-error instead of leaving
// its block empty.
func TestESIFragmentServedStaleIfOriginDown(t *testing.T) {
	t.Parallel()
	o, rj, c := setup(t, "defaults:\n  grace: 0s\n")
	page := rj.URL + esiPage("", []string{incl("/esi/frag.php?name=sie&cc=short")})
	first := get(t, c, page)
	mustIntactPage(t, first, 1, "first page")
	id := mustFrag(t, first, "sie", "first page").ID
	o.Stop() // the page stays fresh for 300 s; the fragment expires after 1
	down := pollPage(t, c, rj, page, `ramjet_esi_fragments_total{cache="stale_if_error"}`)
	mustStatus(t, down, http.StatusOK, "page with the origin down")
	if got := mustFrag(t, down, "sie", "page with the origin down").ID; got != id {
		t.Fatalf("fragment %s with the origin down, want the stale %s", got, id)
	}
}

// pollPage requests page until the counter series has gone up (within
// ttlWait) and returns the answer that made it.
func pollPage(t testing.TB, c *http.Client, rj *testbed.Ramjet, page, series string) result {
	t.Helper()
	before, _ := metric(t, c, rj, series)
	var r result
	if !testbed.Poll(ttlWait, func() bool {
		r = get(t, c, page)
		n, _ := metric(t, c, rj, series)
		return n > before
	}) {
		t.Fatalf("%s did not go up within %v of requests for %s", series, ttlWait, page)
	}
	return r
}

// metricAtLeast waits until the counter series reaches n and returns it.
func metricAtLeast(t testing.TB, c *http.Client, rj *testbed.Ramjet, series string, n float64) float64 {
	t.Helper()
	var v float64
	if !testbed.Poll(ttlWait, func() bool {
		v, _ = metric(t, c, rj, series)
		return v >= n
	}) {
		t.Fatalf("%s = %v, want at least %v", series, v, n)
	}
	return v
}
