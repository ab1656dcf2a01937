package main_test

// A large hit in RAM finds the disk tier's file that holds its very copy
// by the entry, not by the key (proxy/cache/disk/ramfile.go). Whatever
// takes the file out of the tier's index takes that link with it: after
// a purge the page is fetched again, never sent from the purged file;
// after the file is evicted for room the copy in RAM is copied, never
// sent from the file gone. (A copy RAM refreshed since its file was
// written: TestLargeRAMHitIsSentFromItsFileAndNeverFromAnOlderOne.)

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// largePage is a page of size bytes that is stored uncompressed (its
// gzip copy would be smaller than what is sent from a file), tagged
// ns-name.
func largePage(ns, name string, size int) string {
	return fmt.Sprintf("/e/%s/%s?size=%d&%s", ns, name, size,
		hq("Cache-Control: max-age=300", "Content-Type: application/octet-stream", "X-LiteSpeed-Tag: "+ns+"-"+name))
}

// sentFromItsFile asks for page, a fresh hit that must be the stored
// body id, and reports whether its body was sent from the tier's file.
func (n *diskNode) sentFromItsFile(t *testing.T, page, id, what string) bool {
	t.Helper()
	before := n.metric(t, "ramjet_disk_sendfile_total")
	r := n.get(t, page)
	mustFreshHit(t, r, what)
	if r.ID() != id {
		t.Fatalf("%s: body id %q, want %q", what, r.ID(), id)
	}
	return n.metric(t, "ramjet_disk_sendfile_total") > before
}

func TestLargeRAMHitIsNeverSentFromAFileAPurgeOrAnEvictionTook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := startOrigin(t)
	n := &diskNode{o: o, c: newClient(t), path: dir,
		cfg: testbed.WriteConfig(t, "", fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 1MiB\n", dir))}
	n.rj = startRamjet(t, o.URL, "--config", n.cfg)
	ns := nsFor(t)
	purged, evicted := largePage(ns, "purged", 30000), largePage(ns, "evicted", 30000)
	first := map[string]result{}
	for _, p := range []string{purged, evicted} {
		first[p] = n.get(t, p)
		mustMissStored(t, first[p], "first request of "+p)
	}
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_written_total") >= 2 }) {
		t.Fatal("the pages were never written to disk")
	}
	for _, p := range []string{purged, evicted} {
		if !n.sentFromItsFile(t, p, first[p].ID(), "the page in RAM, its file written") {
			t.Fatalf("%s: a 30 KB hit whose file holds it was not sent from the file", p)
		}
	}

	mustStatus(t, adminPost(t, n.c, n.rj, "tag="+ns+"-purged", "", ""), http.StatusOK, "purge by tag")
	again := n.get(t, purged)
	mustMissStored(t, again, "the page purged while its file held its copy in RAM")
	if again.ID() == first[purged].ID() {
		t.Fatal("the purged body was sent again")
	}
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_written_total") >= 3 }) {
		t.Fatal("the page fetched again was never written to disk")
	}
	if !n.sentFromItsFile(t, purged, again.ID(), "the page fetched again after the purge") {
		t.Fatal("the page fetched again after the purge is not sent from its new file")
	}

	// 1.25 MiB more in a tier of 1 MiB: the oldest file, evicted's, goes.
	for i := range 5 {
		mustMissStored(t, n.get(t, largePage(ns, fmt.Sprintf("filler%d", i), 250000)), "a filler")
	}
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_evicted_total") >= 1 }) {
		t.Fatal("the tier evicted nothing: the test needs the page's file evicted")
	}
	if n.sentFromItsFile(t, evicted, first[evicted].ID(), "the page in RAM, its file evicted") {
		t.Fatal("the page was sent from its file after the tier evicted it")
	}
}
