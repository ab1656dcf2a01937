package main_test

// A Redis fan-out gap on a node whose disk tier holds more than RAM: the
// pages only on disk are treated as RAM's, answered stale while one
// request (a visitor's, or the gap's warm-up) refreshes each, and not
// served at all once purge.gap_grace ran out; none is sent to the origin
// at once by the gap.

import (
	"fmt"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// startDiskRedisNode is a node with a 1 MiB RAM tier over a disk tier,
// following the fan-out of a Redis of its own.
func startDiskRedisNode(t *testing.T, grace time.Duration) (*diskNode, *testbed.Redis) {
	t.Helper()
	redis := testbed.StartRedis(t)
	o := startOrigin(t)
	dir := t.TempDir()
	yaml := fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n%spurge:\n  gap_grace: %s\n", dir, smallRAM, grace)
	n := &diskNode{o: o, cfg: testbed.WriteConfig(t, "", yaml), c: newClient(t), path: dir}
	n.start(t, redis)
	return n, redis
}

func (n *diskNode) start(t *testing.T, redis *testbed.Redis) {
	t.Helper()
	n.rj = startRamjet(t, n.o.URL, "--redis", redis.URL, "--node", "node1", "--config", n.cfg)
	waitRedisState(t, n.c, n.rj, 10*time.Second, "at start", func(s string) bool { return s == "connected" })
}

// gapOverDiskOnly caches names (the oldest first) and fillers, restarts
// the node so that names stay on disk only, then takes the origin down
// (the gap's warm-up cannot refresh anything yet), restarts Redis and
// waits for the node's gap. It returns the first bodies and a time no
// earlier than the gap's.
func gapOverDiskOnly(t *testing.T, n *diskNode, redis *testbed.Redis, ns string, names []string) (map[string]result, time.Time) {
	t.Helper()
	first := n.fillPages(t, ns, append(names, pageNames("filler", 60)...))
	n.stop(t) // loads the newest files up to 1 MiB at start: the oldest stay on disk only
	n.start(t, redis)
	if v := n.metric(t, "ramjet_disk_loaded_objects"); v >= 60 {
		t.Fatalf("ramjet_disk_loaded_objects = %v: the test needs pages left on disk only", v)
	}
	n.web(t).Down()
	t.Cleanup(func() { n.web(t).Up(t) }) // the origin's cleanup stops a running nginx
	redis.Restart(t)
	if !testbed.Poll(10*time.Second, func() bool {
		v, _ := metric(t, n.c, n.rj, `ramjet_purge_fanout_gaps_total{reason="epoch"}`)
		return v >= 1
	}) {
		t.Fatal("no gap noticed within 10 s of the Redis restart")
	}
	return first, time.Now()
}

func (n *diskNode) web(t *testing.T) *testbed.Nginx {
	t.Helper()
	web, ok := n.o.web.(*testbed.Nginx)
	if !ok {
		t.Fatalf("origin web server is %T, want nginx", n.o.web)
	}
	return web
}

func TestRedisRestartServesPagesOnDiskOnlyStaleUntilTheGrace(t *testing.T) {
	t.Parallel()
	const grace = 5 * time.Second
	n, redis := startDiskRedisNode(t, grace)
	ns := nsFor(t)
	visited, never := []string{"v0", "v1", "v2"}, "never"
	first, marked := gapOverDiskOnly(t, n, redis, ns, append(visited, never))
	for _, name := range visited {
		u := page30K(ns, name, ns+"-"+name)
		mustStaleHit(t, n.get(t, u), first[name].ID(), name+", only on disk, right after the gap, the origin down")
	}
	n.web(t).Up(t)
	for _, name := range visited {
		u := page30K(ns, name, ns+"-"+name)
		mustRefreshed(t, n.c, n.rj.URL+u, first[name].ID(), name+" once refreshed", "Host: disk.test")
	}
	if v := n.metric(t, "ramjet_disk_hits_total"); v < float64(len(visited)) {
		t.Errorf("ramjet_disk_hits_total = %v: the gapped pages were not read back from disk", v)
	}

	time.Sleep(time.Until(marked.Add(grace))) // the bound under test: nothing of before the gap after it
	r := n.get(t, page30K(ns, never, ns+"-"+never))
	if cs := r.CacheStatus(); r.ID() == first[never].ID() || cs.Fwd == "stale" {
		t.Errorf("a page only on disk nobody asked for: id %q (before the gap %q), Cache-Status %q after the grace, want a copy fetched since",
			r.ID(), first[never].ID(), cs.Raw)
	}
	for _, name := range visited {
		r := n.get(t, page30K(ns, name, ns+"-"+name))
		mustFreshHit(t, r, name+", refreshed during the grace, after it")
		if r.ID() == first[name].ID() {
			t.Errorf("%s: the copy of before the gap served after the grace", name)
		}
	}
}

// A node restarted during the grace keeps the gap's mark and deadline
// (the disk tier keeps them beside its files): a page of before the gap
// is answered stale, not fresh, and not at all after the first deadline.
func TestRestartDuringAGapKeepsPagesOnDiskStaleUntilTheSameDeadline(t *testing.T) {
	t.Parallel()
	const grace = 8 * time.Second
	n, redis := startDiskRedisNode(t, grace)
	ns := nsFor(t)
	names := []string{"stale", "late"}
	first, marked := gapOverDiskOnly(t, n, redis, ns, names)
	n.stop(t)
	n.start(t, redis)
	mustStaleHit(t, n.get(t, page30K(ns, "stale", ns+"-stale")), first["stale"].ID(), "a page of before the gap after a restart during the grace")

	time.Sleep(time.Until(marked.Add(grace))) // the first deadline, not one counted from the restart
	r := n.get(t, page30K(ns, "late", ns+"-late"))
	if cs := r.CacheStatus(); r.ID() == first["late"].ID() || cs.Hit {
		t.Errorf("a page of before the gap, after its grace across a restart: id %q (before the gap %q), Cache-Status %q, want a copy fetched since",
			r.ID(), first["late"].ID(), cs.Raw)
	}
}

// A page only on disk that nobody asks for during a gap's grace is
// refreshed by the gap's warm-up once the origin answers: after the
// grace, with the origin down again, its visitor still gets it, a copy
// fetched after the gap. Before, the grace deleted the file and the
// visitor got 502.
func TestGapWarmUpRefreshesPagesOnDiskOnly(t *testing.T) {
	t.Parallel()
	const grace = 4 * time.Second
	n, redis := startDiskRedisNode(t, grace)
	ns := nsFor(t)
	quiet := pageNames("quiet", 3)
	first, marked := gapOverDiskOnly(t, n, redis, ns, quiet)
	n.web(t).Up(t)
	time.Sleep(time.Until(marked.Add(grace + time.Second))) // past the grace: only a refreshed copy may answer
	n.web(t).Down()
	for _, name := range quiet {
		r := n.get(t, page30K(ns, name, ns+"-"+name))
		mustStatus(t, r, 200, name+", only on disk and unvisited, after the grace with the origin down")
		if r.ID() == first[name].ID() || r.CacheStatus().Fwd == "stale" {
			t.Errorf("%s: id %q Cache-Status %q, want a copy the warm-up fetched after the gap (not %q)", name, r.ID(), r.CacheStatus().Raw, first[name].ID())
		}
	}
}
