package main_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// Redis restarts without its data while the origin is down for a moment:
// no node can tell which purges it missed, and none empties its cache.
// Every cached page keeps answering 200 — stale while the origin is down,
// then refreshed once it is back.
func TestRedisRestartDuringAnOriginRestartKeepsCachedPagesAnswering(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, 2)
	ns := nsFor(t)
	pages := []page{{path: "gap-a", tags: []string{ns + "-a"}}, {path: "gap-b"}}
	ids := make([][]string, len(pages))
	for i, p := range pages {
		ids[i] = cl.cacheOnAll(t, ns, p)
	}
	web, ok := cl.origin.web.(*testbed.Nginx)
	if !ok {
		t.Fatalf("origin web server is %T, want nginx", cl.origin.web)
	}

	web.Down()
	cl.redis.Restart(t)
	for i, rj := range cl.nodes {
		if !testbed.Poll(10*time.Second, func() bool {
			v, _ := metric(t, cl.c, rj, `ramjet_purge_fanout_gaps_total{reason="epoch"}`)
			return v >= 1
		}) {
			t.Fatalf("node%d noticed no gap within 10 s of the Redis restart", i+1)
		}
	}
	for round := range 2 { // the failed refresh of round 0 does not end the grace
		for n, rj := range cl.nodes {
			for i, p := range pages {
				r := get(t, cl.c, rj.URL+p.uri(ns), siteHost)
				mustStaleHit(t, r, ids[i][n], fmt.Sprintf("round %d, node%d: %s with the origin down after the gap", round, n+1, p.path))
			}
		}
	}
	web.Up(t)
	for n, rj := range cl.nodes {
		for i, p := range pages {
			mustRefreshed(t, cl.c, rj.URL+p.uri(ns), ids[i][n], fmt.Sprintf("node%d: %s once the origin is back", n+1, p.path), siteHost)
		}
		if v, _ := metric(t, cl.c, rj, "ramjet_purge_gap_refreshes_total"); v < float64(len(pages)) {
			t.Errorf("node%d: ramjet_purge_gap_refreshes_total %v, want >= %d", n+1, v, len(pages))
		}
		if v, _ := metric(t, cl.c, rj, "ramjet_purge_gap_stale_objects_total"); v < float64(len(pages)) {
			t.Errorf("node%d: ramjet_purge_gap_stale_objects_total %v, want >= %d", n+1, v, len(pages))
		}
		if out := rj.Output(); strings.Contains(out, "flushed the whole cache") || !strings.Contains(out, "stale until refreshed") {
			t.Errorf("node%d: want a stale gap and no flush in its log:\n%s", n+1, out)
		}
	}
}

// A purge a node never read (it was stopped while the stream was trimmed
// past it) is honoured at most purge.gap_grace late: after the grace the
// purged page, like every page cached before the gap, is a copy fetched
// since (the gap's warm-up refetched it, or its visitor does).
func TestPurgeMissedByACutOffNodeIsNotServedPastTheGrace(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	cl := startClusterWith(t, 2, fmt.Sprintf("purge:\n  gap_grace: %s\n", grace))
	ns := nsFor(t)
	target := page{path: "target", tags: []string{ns + "-t"}}
	bystander := page{path: "bystander", tags: []string{ns + "-k"}}
	tIDs := cl.cacheOnAll(t, ns, target)
	bIDs := cl.cacheOnAll(t, ns, bystander)

	n2 := cl.nodes[1]
	n2.Freeze(t)
	stopped := true
	resume := func() {
		if stopped {
			stopped = false
			n2.Thaw(t)
		}
	}
	t.Cleanup(resume)
	mustStatus(t, adminPost(t, cl.c, cl.nodes[0], "tag="+target.tags[0], "", ""), http.StatusOK, "admin purge on node1")
	if !testbed.Poll(5*time.Second, func() bool {
		n, _ := cl.redis.Query("XLEN", "ramjet:purge")
		return n == "1"
	}) {
		t.Fatal("node1 did not publish the purge within 5 s")
	}
	cl.redis.Do(t, "XTRIM", "ramjet:purge", "MAXLEN", "0")
	resume()

	if !testbed.Poll(10*time.Second, func() bool {
		v, _ := metric(t, cl.c, n2, `ramjet_purge_fanout_gaps_total{reason="trimmed"}`)
		return v >= 1
	}) {
		t.Fatalf("node2 noticed no gap within 10 s of resuming:\n%s", n2.Output())
	}
	time.Sleep(grace) // the bound under test: nothing of before the gap is served after it
	for _, pg := range []struct {
		p   page
		old string
	}{{target, tIDs[1]}, {bystander, bIDs[1]}} {
		r := get(t, cl.c, n2.URL+pg.p.uri(ns), siteHost)
		mustStatus(t, r, http.StatusOK, "node2: "+pg.p.path+" after the gap's grace")
		if cs := r.CacheStatus(); r.ID() == pg.old || cs.Fwd == "stale" {
			t.Errorf("node2: %s served %q (Cache-Status %q) %v after the gap, want a copy fetched since (the body of before was %q)", pg.p.path, r.ID(), cs.Raw, grace, pg.old)
		}
	}
	mustFate(t, cl.c, cl.nodes[0].URL+bystander.uri(ns), bIDs[0], kept, "node1 (kept up): bystander", siteHost)
	waitRedisState(t, cl.c, n2, 10*time.Second, "of node2 after resuming", func(s string) bool { return s == "connected" })
}

// A page nobody asks for while the origin is down and Redis restarts is
// refreshed by the gap's own warm-up once the origin is back: its next
// visitor, after the grace and with the origin down again, still gets it.
func TestGapWarmUpKeepsAnUnvisitedPageThroughTheNextOutage(t *testing.T) {
	t.Parallel()
	const grace = 3 * time.Second
	cl := startClusterWith(t, 1, fmt.Sprintf("purge:\n  gap_grace: %s\n", grace))
	ns := nsFor(t)
	quiet := page{path: "quiet"}
	ids := cl.cacheOnAll(t, ns, quiet)
	web, ok := cl.origin.web.(*testbed.Nginx)
	if !ok {
		t.Fatalf("origin web server is %T, want nginx", cl.origin.web)
	}
	web.Down()
	cl.redis.Restart(t)
	rj := cl.nodes[0]
	if !testbed.Poll(10*time.Second, func() bool {
		v, _ := metric(t, cl.c, rj, `ramjet_purge_fanout_gaps_total{reason="epoch"}`)
		return v >= 1
	}) {
		t.Fatal("no gap noticed within 10 s of the Redis restart")
	}
	web.Up(t)
	if !testbed.Poll(grace, func() bool {
		v, _ := metric(t, cl.c, rj, "ramjet_purge_gap_refreshes_total")
		return v >= 1
	}) {
		t.Fatalf("the warm-up refreshed nothing within the %v grace", grace)
	}
	time.Sleep(grace) // past the grace: only a refreshed copy may answer
	web.Down()
	r := get(t, cl.c, rj.URL+quiet.uri(ns), siteHost)
	mustStatus(t, r, http.StatusOK, "the unvisited page after the grace, origin down")
	if r.ID() == ids[0] || !r.CacheStatus().FreshHit() {
		t.Errorf("unvisited page: id %q Cache-Status %q, want a fresh hit of a copy fetched after the gap (not %q)", r.ID(), r.CacheStatus().Raw, ids[0])
	}
	web.Up(t) // the origin's cleanup stops a running nginx
}
