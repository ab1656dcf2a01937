package main_test

// A large page in RAM is sent from the disk tier's file (sendfile) when
// that file was written from the very copy RAM holds: the same bytes and
// headers as a copy from RAM. A copy RAM refreshed since, whose file the
// tier could not rewrite (here: its writes fail), is copied from RAM,
// never sent from the older file.

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// withoutClock is h without the headers built from the clock.
func withoutClock(h http.Header) http.Header {
	c := h.Clone()
	c.Del("Date")
	c.Del("Age")
	return c
}

func TestLargeRAMHitIsSentFromItsFileAndNeverFromAnOlderOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := startDiskNode(t, dir)
	ns := nsFor(t)
	// Not compressed (no gzip copy, whose size would differ per copy): two
	// copies are the same size, only which copy a file holds tells them
	// apart. stale-while-revalidate keeps the first copy's file servable
	// after the refresh.
	page := "/e/" + ns + "/p?size=30000&" + hq("Cache-Control: max-age=2, stale-while-revalidate=300", "Content-Type: application/octet-stream")
	first := n.get(t, page)
	mustMissStored(t, first, "first request")
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_written_total") >= 1 }) {
		t.Fatal("the page was never written to disk")
	}

	hit := n.get(t, page)
	mustFreshHit(t, hit, "the page in RAM, its file written")
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != 1 {
		t.Fatalf("ramjet_disk_sendfile_total = %v after a 30 KB hit in RAM whose file holds it, want 1", v)
	}
	if string(hit.Body) != string(first.Body) {
		t.Fatalf("the hit sent from the file has %d bytes (id %q), the page stored %d (id %q)", len(hit.Body), hit.ID(), len(first.Body), first.ID())
	}
	// HEAD is never sent from a file: the head a copy from RAM has.
	head := do(t, n.c, http.MethodHead, n.rj.URL+page, "Host: disk.test")
	mustFreshHit(t, head, "HEAD")
	if got, want := withoutClock(hit.Header), withoutClock(head.Header); !equalHeaders(got, want) {
		t.Fatalf("sent from the file with\n%v\nfrom RAM with\n%v", got, want)
	}

	// The tier can write no more: the page's file stays the first copy.
	if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
		t.Fatal(err)
	}
	var fresh result
	if !testbed.Poll(15*time.Second, func() bool {
		fresh = n.get(t, page)
		return fresh.CacheStatus().FreshHit() && fresh.ID() != first.ID()
	}) {
		t.Fatalf("after the origin's copy changed, the hits still send id %q, the older file's (last: %q, %q)", first.ID(), fresh.ID(), fresh.Header.Get("Cache-Status"))
	}
	if v := n.metric(t, "ramjet_disk_write_errors_total"); v < 1 {
		t.Fatalf("ramjet_disk_write_errors_total = %v: the refreshed copy's file was written, the test proves nothing", v)
	}
	if len(fresh.Body) != len(first.Body) {
		t.Fatalf("the refreshed page has %d bytes, the first %d: the test needs copies of one size", len(fresh.Body), len(first.Body))
	}
	// Until it goes stale, the refreshed copy is copied from RAM.
	sent := n.metric(t, "ramjet_disk_sendfile_total")
	again := n.get(t, page)
	if again.CacheStatus().FreshHit() && again.ID() != fresh.ID() {
		t.Fatalf("a hit sent id %q after the refreshed copy %q", again.ID(), fresh.ID())
	}
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != sent {
		t.Fatalf("ramjet_disk_sendfile_total moved %v -> %v: a copy newer than its file was sent from it", sent, v)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}
