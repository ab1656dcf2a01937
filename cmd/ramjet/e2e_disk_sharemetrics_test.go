package main_test

// A site's own disk tier (hosts[].cache_size with cache.disk) exports the
// disk tier's series labelled with its site, as the per-site series are:
// what its share holds, writes and sends counts there, never in the
// shared tier's bare series. A reload that drops the share drops its
// series; one that gives it back registers them again.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// siteSeries is what /metrics says of name for site: its value, or false
// when it has no such series. One scrape answers both: the series may
// go between two.
func siteSeries(t *testing.T, n *diskNode, name, site string) (float64, bool) {
	t.Helper()
	series := fmt.Sprintf("%s{site=%q} ", name, site)
	for line := range strings.Lines(string(get(t, n.c, n.rj.AdminURL+"/metrics").Body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s%q: %v", series, v, err)
			}
			return f, true
		}
	}
	return 0, false
}

func TestSiteShareOnDiskExportsTheDiskSeriesLabelledWithItsSite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	withShare := "hosts:\n  - names: [share.test]\n    cache_size: 1MiB\n"
	n := startDiskNodeWith(t, dir, withShare)
	ns := nsFor(t)
	share := func(name string) result {
		return get(t, n.c, n.rj.URL+page30K(ns, name, ns+"-"+name), "Host: share.test")
	}
	for _, name := range pageNames("own", 3) {
		mustMissStored(t, share(name), "share.test: "+name)
	}
	mustMissStored(t, n.get(t, page30K(ns, "shared", ns+"-shared")), "the shared tier's page")
	written := func() bool {
		v, ok := siteSeries(t, n, "ramjet_disk_written_total", "share.test")
		return ok && v == 3 && n.metric(t, "ramjet_disk_written_total") == 1
	}
	if !testbed.Poll(testbed.StopTimeout, written) {
		v, ok := siteSeries(t, n, "ramjet_disk_written_total", "share.test")
		t.Fatalf("ramjet_disk_written_total{site=\"share.test\"} = %v (there: %v) and bare %v; want the share's 3 and the shared tier's 1",
			v, ok, n.metric(t, "ramjet_disk_written_total"))
	}
	if v, _ := siteSeries(t, n, "ramjet_disk_objects", "share.test"); v != 3 {
		t.Errorf("ramjet_disk_objects{site=\"share.test\"} = %v, want 3", v)
	}
	// A hit in RAM sent from its file (30 KB): counted on the share.
	mustFreshHit(t, share("own000"), "share.test: own000 again")
	if v, _ := siteSeries(t, n, "ramjet_disk_sendfile_total", "share.test"); v != 1 {
		t.Errorf("ramjet_disk_sendfile_total{site=\"share.test\"} = %v after a hit sent from its file, want 1", v)
	}
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != 0 {
		t.Errorf("the shared tier's ramjet_disk_sendfile_total = %v, want 0: the hit was the share's", v)
	}

	reload := func(more string) {
		t.Helper()
		testbed.WriteConfig(t, filepath.Dir(n.cfg), fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", dir)+more)
		n.rj.Signal(t, syscall.SIGHUP)
	}
	reload("")
	if !testbed.Poll(testbed.StopTimeout, func() bool { _, ok := siteSeries(t, n, "ramjet_disk_objects", "share.test"); return !ok }) {
		t.Fatal("the site's disk series are still exported after a reload dropped its share")
	}
	reload(withShare)
	if !testbed.Poll(testbed.StopTimeout, func() bool { v, ok := siteSeries(t, n, "ramjet_disk_objects", "share.test"); return ok && v == 0 }) {
		t.Fatal("the site's disk series did not come back, at 0, with the share a reload gave back")
	}
}
