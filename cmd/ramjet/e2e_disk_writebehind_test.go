package main_test

// The disk tier's writer copies pages off the request path, from a
// queue; when it falls behind, RAM may evict a page before its file is
// written. The queue answers for such a page (a write-behind index):
// before, it was in neither tier, and its next visitor went to the
// origin — a 502 while the origin was down, as in the soak after a
// fan-out gap, whose end deletes the files its warm-up's copies replace.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/cache/disk"
)

// leaveFiles leaves count small pages in the disk tier under dir, as an
// earlier run would have, stopped cleanly.
func leaveFiles(t *testing.T, dir string, count int) {
	t.Helper()
	c, err := cache.New(cache.Config{Size: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() //nolint:errcheck // never fails
	tier, err := disk.Open(disk.Config{Path: dir, Size: 1 << 30, Queue: count}, c)
	if err != nil {
		t.Fatal(err)
	}
	tier.Start(t.Context())
	now := time.Now().UnixNano()
	for i := range count {
		key := fmt.Sprintf("http://old.test/%d", i)
		c.Insert(c.Hash([]byte(key)), key, cache.VarySpec{}, &cache.Entry{Status: 200, Body: []byte("old"),
			Born: now, Stored: now, FreshUntil: now + int64(time.Hour), StaleUntil: now + int64(time.Hour),
			ErrorUntil: now + int64(time.Hour), Shared: true})
	}
	if err := tier.Close(); err != nil {
		t.Fatal(err)
	}
}

// staticPages writes count static pages of 30 KB under the origin's
// /static/NS/ and returns their paths and bodies.
func staticPages(t *testing.T, ns string, count int) ([]string, map[string][]byte) {
	t.Helper()
	dir := filepath.Join(docroot, "static", ns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) //nolint:errcheck // best effort
	paths, bodies := make([]string, count), map[string][]byte{}
	for i := range paths {
		name := fmt.Sprintf("p%03d.html", i)
		body := bytes.Repeat([]byte(fmt.Sprintf("<p>%s %s</p>\n", ns, name)), 30000/len(ns)/2)
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
		paths[i] = "/static/" + ns + "/" + name
		bodies[paths[i]] = body
	}
	return paths, bodies
}

// eightAtOnce runs fn for each path, eight at a time, and returns the
// first error.
func eightAtOnce(paths []string, fn func(path string) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	work := make(chan string)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if err := fn(p); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range paths {
		work <- p
	}
	close(work)
	wg.Wait()
	return first
}

// While the writer deletes what a purge of everything covered (40,000
// files), the pages stored meanwhile wait for it; RAM (1 MiB) keeps
// about 30 of these 100 pages of 30 KB. Every one is a hit all the same,
// with the body stored: the others from the writer's queue.
func TestPageRAMEvictedBeforeItsFileIsWrittenIsStillAHit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	leaveFiles(t, dir, 40000)
	n := startDiskNodeWith(t, dir, smallRAM)
	ns := nsFor(t)
	paths, bodies := staticPages(t, ns, 100)
	mustStatus(t, adminPost(t, n.c, n.rj, "all=1", "", ""), 200, "purge of everything")
	if err := eightAtOnce(paths, func(path string) error {
		r, err := tryDo(n.c, "GET", n.rj.URL+path, nil, "Host: disk.test")
		if err == nil && (!r.CacheStatus().MissStored() || !bytes.Equal(r.Body, bodies[path])) {
			err = fmt.Errorf("%s: status %d, Cache-Status %q, want the page as a stored miss", path, r.Status, r.CacheStatus().Raw)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	behind := float64(len(paths)) - n.metric(t, "ramjet_disk_written_total")
	for _, path := range paths {
		r := n.get(t, path)
		if r.Status != 200 || !r.CacheStatus().FreshHit() || !bytes.Equal(r.Body, bodies[path]) {
			t.Fatalf("%s, stored while %v of them waited for the writer: status %d, Cache-Status %q, body %.40q; want the stored page as a hit",
				path, behind, r.Status, r.CacheStatus().Raw, r.Body)
		}
	}
	queued, _ := metric(t, n.c, n.rj, "ramjet_disk_queued_hits_total")
	t.Logf("%v pages waited for the writer once stored; %v hits from its queue", behind, queued)
	// polls the writer's counter; nothing to wait on
	if !testbed.Poll(time.Minute, func() bool { return n.metric(t, "ramjet_disk_objects") == float64(len(paths)) }) {
		t.Fatalf("ramjet_disk_objects = %v, want the %d pages written once the writer caught up", n.metric(t, "ramjet_disk_objects"), len(paths))
	}
}

// Two fan-out gaps within one grace (the soak's two Redis restarts 9 s
// apart): a page only on disk that the first gap's warm-up refreshed
// may have missed only the second gap's purges, so it keeps the second
// gap's grace. Before, the second gap gave every page the first one's
// deadline: the refreshed copy was deleted then with the rest, and its
// next visitor got 502 while the origin was down.
func TestPageRefreshedBetweenTwoGapsOutlivesTheFirstGrace(t *testing.T) {
	t.Parallel()
	const grace = 8 * time.Second
	n, redis := startDiskRedisNode(t, grace)
	ns := nsFor(t)
	first, marked := gapOverDiskOnly(t, n, redis, ns, []string{"page"})
	u := page30K(ns, "page", ns+"-page")
	n.web(t).Up(t)
	mustRefreshed(t, n.c, n.rj.URL+u, first["page"].ID(), "the page, only on disk, during the first gap", "Host: disk.test")
	refreshed := n.get(t, u)
	mustFreshHit(t, refreshed, "the page refreshed during the first gap")
	n.web(t).Down()                                     // the second gap's warm-up must not refresh it again
	time.Sleep(time.Until(marked.Add(3 * time.Second))) // the second gap's grace ends 3 s after the first one's
	redis.Restart(t)
	if !testbed.Poll(10*time.Second, func() bool {
		v, _ := metric(t, n.c, n.rj, `ramjet_purge_fanout_gaps_total{reason="epoch"}`)
		return v >= 2
	}) {
		t.Fatal("no second gap within 10 s of the second Redis restart")
	}
	if time.Now().After(marked.Add(grace - 2*time.Second)) {
		t.Fatalf("the second gap came %v after the first: too late for its grace to outlast the first one's", time.Since(marked))
	}
	time.Sleep(time.Until(marked.Add(grace + 500*time.Millisecond))) // past the first grace, within the second
	r := n.get(t, u)
	if cs := r.CacheStatus(); r.Status != 200 || !cs.Hit || r.ID() != refreshed.ID() {
		t.Fatalf("the page refreshed between the gaps, after the first grace, the origin down: status %d, Cache-Status %q, id %q; want the refreshed copy %q as a hit",
			r.Status, cs.Raw, r.ID(), refreshed.ID())
	}
}
