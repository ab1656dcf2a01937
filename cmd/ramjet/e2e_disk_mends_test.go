package main_test

// What /metrics says of the disk tier is what happened, each answer
// counted once: a page on disk only that is stale is one hit from disk
// (the tier lends it, the stale copy is read back into RAM instead: no
// second hit, nothing sent from the file), and a 304 to a conditional
// request from a page on disk only is a hit with no body sent.

import (
	"net/http"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestDiskHitsAndSendfileCountEachAnswerOnceAndOnlyBodiesSent(t *testing.T) {
	t.Parallel()
	n := startDiskNodeWith(t, t.TempDir(), smallRAM)
	ns := nsFor(t)
	stale := "/e/" + ns + "/stale?size=30000&" + hq("Cache-Control: max-age=1, stale-while-revalidate=600", "X-LiteSpeed-Tag: "+ns+"-stale")
	fresh := "/e/" + ns + "/fresh?size=30000&" + hq("Cache-Control: max-age=600", "ETag: \"mends-1\"", "X-LiteSpeed-Tag: "+ns+"-fresh")
	first := n.get(t, stale)
	mustMissStored(t, first, "first request of the stale page")
	storedAt := time.Now()
	mustMissStored(t, n.get(t, fresh), "first request of the fresh page")
	n.fillPages(t, ns, pageNames("filler", 60))
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_written_total") >= 62 }) {
		t.Fatal("the pages were never all written")
	}
	n.restart(t) // loads the newest files up to 1 MiB: the two pages stay on disk only
	if v := n.metric(t, "ramjet_disk_loaded_objects"); v >= 60 {
		t.Fatalf("ramjet_disk_loaded_objects = %v: the test needs pages on disk only", v)
	}
	time.Sleep(time.Until(storedAt.Add(1500 * time.Millisecond))) // past max-age=1: stale
	counts := func() (hits, sent float64) {
		return n.metric(t, "ramjet_disk_hits_total"), n.metric(t, "ramjet_disk_sendfile_total")
	}
	want := func(what string, hits0, sent0, dh, ds float64) {
		t.Helper()
		if hits, sent := counts(); hits != hits0+dh || sent != sent0+ds {
			t.Errorf("%s: ramjet_disk_hits_total +%v, ramjet_disk_sendfile_total +%v; want +%v, +%v", what, hits-hits0, sent-sent0, dh, ds)
		}
	}

	hits, sent := counts()
	mustStaleHit(t, n.get(t, stale), first.ID(), "the stale page on disk only")
	want("a stale page on disk only", hits, sent, 1, 0)

	hits, sent = counts()
	mustStatus(t, get(t, n.c, n.rj.URL+fresh, "Host: disk.test", `If-None-Match: "mends-1"`), http.StatusNotModified, "a conditional request of the fresh page on disk only")
	want("a 304 from a page on disk only", hits, sent, 1, 0)

	hits, sent = counts()
	mustFreshHit(t, n.get(t, fresh), "the fresh page on disk only")
	want("a 200 sent from the page's file", hits, sent, 1, 1)
}
