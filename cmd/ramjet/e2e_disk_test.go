package main_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// diskNode runs ramjet with the disk tier in dir in front of o; restart
// stops it with SIGTERM and starts the next process on the same files.
type diskNode struct {
	o    *origin
	cfg  string
	rj   *testbed.Ramjet
	c    *http.Client
	path string
}

func startDiskNode(t *testing.T, dir string) *diskNode {
	t.Helper()
	return startDiskNodeWith(t, dir, "")
}

// startDiskNodeWith adds more to the config: keys of cache (indented by
// two spaces) first, then top-level ones.
func startDiskNodeWith(t *testing.T, dir, more string) *diskNode {
	t.Helper()
	o := startOrigin(t)
	yaml := fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", dir) + more
	n := &diskNode{o: o, cfg: testbed.WriteConfig(t, "", yaml), c: newClient(t), path: dir}
	n.rj = startRamjet(t, o.URL, "--config", n.cfg)
	return n
}

func (n *diskNode) restart(t *testing.T) {
	t.Helper()
	n.stop(t)
	n.rj = startRamjet(t, n.o.URL, "--config", n.cfg)
}

func (n *diskNode) stop(t *testing.T) {
	t.Helper()
	n.rj.Signal(t, syscall.SIGTERM)
	if code := n.rj.Wait(t, testbed.StopTimeout); code != 0 {
		t.Fatalf("exit status %d after SIGTERM:\n%s", code, n.rj.Output())
	}
}

// metric reads one sample of the admin /metrics.
func (n *diskNode) metric(t *testing.T, name string) float64 {
	t.Helper()
	r := get(t, n.c, n.rj.AdminURL+"/metrics")
	m := regexp.MustCompile(`(?m)^` + name + ` ([0-9.e+]+)$`).FindSubmatch(r.Body)
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// get asks for path under one Host: each process listens on new ports,
// and the Host (with its port) is part of the cache key.
func (n *diskNode) get(t *testing.T, path string) result {
	t.Helper()
	return get(t, n.c, n.rj.URL+path, "Host: disk.test")
}

func diskPage(ns, name, tag string) string {
	return "/e/" + ns + "/" + name + "?" + hq("Cache-Control: max-age=300", "X-LiteSpeed-Tag: "+tag)
}

func TestDiskTierRestartServesHitsWithoutAskingTheOrigin(t *testing.T) {
	t.Parallel()
	n := startDiskNode(t, t.TempDir())
	ns := nsFor(t)
	first := n.get(t, diskPage(ns, "a", "ta"))
	mustMissStored(t, first, "first request")
	n.restart(t)
	again := n.get(t, diskPage(ns, "a", "ta"))
	mustFreshHit(t, again, "first request after a restart")
	if again.ID() != first.ID() {
		t.Fatalf("hit body id %q, want the stored %q", again.ID(), first.ID())
	}
	if got := n.o.loggedRequests(t, "/e/"+ns+"/a"); got != 1 {
		t.Fatalf("origin asked %d times, want once (before the restart)", got)
	}
	if v := n.metric(t, "ramjet_disk_loaded_objects"); v < 1 {
		t.Errorf("ramjet_disk_loaded_objects = %v", v)
	}
}

func TestDiskTierHonoursAPurgeAppliedJustBeforeSIGTERM(t *testing.T) {
	t.Parallel()
	n := startDiskNode(t, t.TempDir())
	ns := nsFor(t)
	for _, p := range []string{"kept", "purged"} {
		mustMissStored(t, n.get(t, diskPage(ns, p, ns+"-"+p)), p)
	}
	n.restart(t) // both on disk now
	mustFreshHit(t, n.get(t, diskPage(ns, "purged", ns+"-purged")), "before the purge")
	mustStatus(t, adminPost(t, n.c, n.rj, "tag="+ns+"-purged", "", ""), http.StatusOK, "purge")
	n.restart(t)
	mustFreshHit(t, n.get(t, diskPage(ns, "kept", ns+"-kept")), "page not purged")
	mustMissStored(t, n.get(t, diskPage(ns, "purged", ns+"-purged")), "page purged before the restart")
}

func TestDiskTierDropsATruncatedEntryFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := startDiskNode(t, dir)
	ns := nsFor(t)
	first := n.get(t, diskPage(ns, "a", "ta"))
	mustMissStored(t, first, "first request")
	n.stop(t)
	files, err := filepath.Glob(filepath.Join(dir, "objects", "*", "*"))
	if err != nil || len(files) != 1 {
		t.Fatalf("entry files %v (%v), want one", files, err)
	}
	st, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(files[0], st.Size()-10); err != nil { // power lost mid-write
		t.Fatal(err)
	}
	n.rj = startRamjet(t, n.o.URL, "--config", n.cfg)
	r := n.get(t, diskPage(ns, "a", "ta"))
	mustMissStored(t, r, "request for the truncated entry")
	if r.ID() == first.ID() {
		t.Fatal("served the truncated entry's body")
	}
	if v := n.metric(t, "ramjet_disk_corrupt_dropped_total"); v != 1 {
		t.Errorf("ramjet_disk_corrupt_dropped_total = %v, want 1", v)
	}
	if !strings.Contains(n.rj.Output(), "dropped an unreadable entry file") {
		t.Errorf("no log line for the dropped file:\n%s", n.rj.Output())
	}
}

// smallFilesystem is a directory on a filesystem of its own, of 1 MiB
// (a tmpfs), for a test that fills it.
func smallFilesystem(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		testbed.Skipf(t, "cannot mount a 1 MiB tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() }) // the test dir's own cleanup reports leftovers
	return dir
}

func TestDiskTierFullDiskDegradesToRAMOnly(t *testing.T) {
	t.Parallel()
	dir := smallFilesystem(t)
	n := startDiskNode(t, dir)
	ns := nsFor(t)
	for i := range 6 { // 6 x 300 KB > 1 MiB
		u := "/e/" + ns + "/" + strconv.Itoa(i) + "?size=300000&ctype=application/octet-stream&" + hq("Cache-Control: max-age=300")
		mustMissStored(t, n.get(t, u), "page "+strconv.Itoa(i))
		mustFreshHit(t, n.get(t, u), "page "+strconv.Itoa(i)+" from RAM")
	}
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_degraded") == 1 }) {
		t.Fatalf("ramjet_disk_degraded never 1:\n%s", n.rj.Output())
	}
	if v := n.metric(t, "ramjet_disk_write_errors_total"); v < 1 {
		t.Errorf("ramjet_disk_write_errors_total = %v", v)
	}
	n.rj.WaitOutput(t, 0, "disk tier: write failed", testbed.StopTimeout)
}

// mustNotFreshOld fails if r is a fresh hit of old's body: served stale
// while refreshed is the gap's policy, and the gap's warm-up may have
// refreshed it already.
func mustNotFreshOld(t *testing.T, r, old result, what string) {
	t.Helper()
	if freshOld(r, old) {
		t.Fatalf("%s: Cache-Status %q, the body of before served as fresh", what, r.CacheStatus().Raw)
	}
}

// A crash may lose the last purges before they reached the disk: what a
// start without the clean-shutdown marker loads is a gap (stale while
// refreshed), never fresh hits.
func TestDiskTierAfterACrashServesNothingAsFresh(t *testing.T) {
	t.Parallel()
	n := startDiskNode(t, t.TempDir())
	ns := nsFor(t)
	first := n.get(t, diskPage(ns, "a", "ta"))
	mustMissStored(t, first, "first request")
	n.restart(t) // on disk, with the marker
	mustFreshHit(t, n.get(t, diskPage(ns, "a", "ta")), "after a clean restart")
	n.rj.Signal(t, syscall.SIGKILL)
	n.rj.Wait(t, testbed.StopTimeout)
	n.rj = startRamjet(t, n.o.URL, "--config", n.cfg)
	r := n.get(t, diskPage(ns, "a", "ta"))
	mustStatus(t, r, http.StatusOK, "first request after a crash")
	mustNotFreshOld(t, r, first, "a page loaded after a crash")
	n.o.waitRequests(t, "/e/"+ns+"/a", 2) // refreshed from the origin
	n.rj.WaitOutput(t, 0, "did not stop cleanly", testbed.StopTimeout)
}

// fanOutPair is node2 (n: a disk tier) and node1 (none) on one Redis.
type fanOutPair struct {
	n      *diskNode
	node1  *testbed.Ramjet
	redis  *testbed.Redis
	node2  []string // node2's arguments
	ns     string
	cached map[string]result // node2's first answer per page
}

// startFanOutPair starts both nodes and caches pages on node2.
func startFanOutPair(t *testing.T, pages ...string) *fanOutPair {
	t.Helper()
	p := &fanOutPair{redis: testbed.StartRedis(t), n: startDiskNode(t, t.TempDir()), ns: nsFor(t), cached: map[string]result{}}
	p.node2 = []string{"--config", p.n.cfg, "--redis", p.redis.URL, "--node", "node2"}
	p.n.stop(t)
	p.n.rj = startRamjet(t, p.n.o.URL, p.node2...)
	p.node1 = startRamjet(t, p.n.o.URL, "--redis", p.redis.URL, "--node", "node1")
	for _, pg := range pages {
		p.cached[pg] = p.get(t, pg)
		mustMissStored(t, p.cached[pg], "node2: first request of "+pg)
	}
	return p
}

func (p *fanOutPair) get(t *testing.T, page string) result {
	t.Helper()
	return p.n.get(t, diskPage(p.ns, page, p.ns+"-"+page))
}

// purgeWhileDown stops node2 and purges page's tag through node1.
func (p *fanOutPair) purgeWhileDown(t *testing.T, page string) {
	t.Helper()
	p.n.stop(t)
	mustStatus(t, adminPost(t, p.n.c, p.node1, "tag="+p.ns+"-"+page, "", ""), http.StatusOK, "purge on node1 while node2 is down")
	if !testbed.Poll(5*time.Second, func() bool { l, _ := p.redis.Query("XLEN", "ramjet:purge"); return l == "1" }) {
		t.Fatal("node1 did not publish the purge")
	}
}

// With the Redis fan-out, a node restarted with its disk tier resumes the
// stream where it stopped: a purge another node published while it was
// down is applied before it serves, and the pages nobody purged are
// still fresh hits.
func TestDiskTierNodeRestartedAfterAFanOutPurgeAppliesItAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	p := startFanOutPair(t, "purged", "kept")
	p.purgeWhileDown(t, "purged")
	p.n.rj = startRamjet(t, p.n.o.URL, p.node2...)
	r := p.get(t, "purged")
	mustNotFreshOld(t, r, p.cached["purged"], "node2: the page purged while it was down")
	mustMissStored(t, r, "node2: the page purged while it was down")
	again := p.get(t, "kept")
	mustFreshHit(t, again, "node2: a page nobody purged")
	if again.ID() != p.cached["kept"].ID() {
		t.Fatalf("kept page id %q, want the stored %q", again.ID(), p.cached["kept"].ID())
	}
}

// A fan-out node whose stream position cannot be replayed (Redis lost
// the stream) treats what it loaded as a gap: never a fresh hit of a
// page purged meanwhile.
func TestDiskTierFanOutNodeWhoseStreamWasLostServesNoPurgedPageAsFresh(t *testing.T) {
	t.Parallel()
	p := startFanOutPair(t, "a")
	p.purgeWhileDown(t, "a")
	p.redis.Do(t, "DEL", "ramjet:purge", "ramjet:purge:epoch") // a Redis restarted without its data
	p.n.rj = startRamjet(t, p.n.o.URL, p.node2...)
	r := p.get(t, "a")
	mustStatus(t, r, http.StatusOK, "node2: first request after its restart")
	mustNotFreshOld(t, r, p.cached["a"], "node2: the page purged while it was down")
	p.n.rj.WaitOutput(t, 0, "purge fan-out gap", testbed.StopTimeout) // the resumed cursor saw the epoch change
}
