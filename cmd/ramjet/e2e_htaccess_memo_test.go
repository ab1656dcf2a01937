package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// memoSites is a shared host's count of proxied sites that each have
// the LiteSpeed Cache plugin's .htaccess.
const memoSites = 300

// TestThreeHundredHtaccessSitesCostLittleHeapAndKeepTheirOwnRules: each
// site's .htaccess tree kept a table of remembered evaluations of its
// own, 1.6 MB of heap per site and per config generation (before: about
// 490 MB of heap in use for 300 sites, every byte of it scanned by each
// garbage collection). The sites now share one table; each still gets
// its own rules' answers, across a reload.
func TestThreeHundredHtaccessSitesCostLittleHeapAndKeepTheirOwnRules(t *testing.T) {
	o := startOrigin(t)
	dir := t.TempDir()
	var hosts strings.Builder
	for i := range memoSites {
		root := testbed.PublicDir(t)
		rules := "RewriteEngine on\nCacheLookup on\n"
		if i%2 == 0 {
			rules += "RewriteRule .* - [E=Cache-Control:no-cache]\n"
		}
		write(t, filepath.Join(root, ".htaccess"), "<IfModule LiteSpeed>\n"+rules+"</IfModule>\n")
		fmt.Fprintf(&hosts, "  - names: [s%d.test]\n    htaccess_root: %q\n", i, root)
	}
	conf := "hosts:\n" + hosts.String()
	rj := startRamjet(t, o.URL, "--config", testbed.WriteConfig(t, dir, conf))
	c := newClient(t)
	page := rj.URL + "/e/memo?h[]=Cache-Control:+public,+max-age=300"
	each := func(round int) {
		t.Helper()
		for i := range memoSites {
			host := fmt.Sprintf("Host: s%d.test", i)
			get(t, c, page, host)
			got := get(t, c, page, host).Header.Get("Cache-Status")
			want := "ramjet; hit"
			if i%2 == 0 {
				want = "ramjet; fwd=bypass"
			}
			if got != want {
				t.Fatalf("round %d, site s%d.test: Cache-Status %q, want %q (its own .htaccess)", round, i, got, want)
			}
		}
	}
	each(0)

	from := len(rj.Output())
	testbed.WriteConfig(t, dir, conf+"  - names: [another.test]\n")
	rj.Signal(t, syscall.SIGHUP)
	rj.WaitOutput(t, from, "config reloaded", 30*time.Second)
	each(1)

	const limit = 64 << 20
	if heap := metricValue(t, rj.AdminURL, "go_memstats_heap_inuse_bytes"); heap > limit {
		t.Fatalf("heap in use %.1f MiB with %d sites with .htaccess files, want under %d MiB", heap/(1<<20), memoSites, limit>>20)
	}
}
