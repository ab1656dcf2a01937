package proxy

import (
	"path/filepath"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"slices"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/purge"
)

// A fan-out gap refreshes a docroot site's pages too, each by a request
// ramjet makes up through the site's .htaccess rules and PHP: the
// permalink is run again and is a hit of the new copy; the members'
// page the rules refuse a request without the member's field is never
// run, and stays stale for its visitors to refresh.
func TestGapRefreshesADocrootSitesPagesThroughItsRules(t *testing.T) {
	site, ran := memberSite(t)
	p := newTestProxy(t, docrootConfig(site), nil)
	const agent = "curl/8.5.0"
	first := hitCtx("/hello-world/", agent)
	p.ServeFastHTTP(first)
	member := hitCtx("/members/list/", agent)
	member.Request.Header.Set("X-Member", "yes")
	p.ServeFastHTTP(member)
	writeFile(t, ran, "")
	p.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindAll, Soft: true}}, Gap: true, Grace: time.Minute})
	p.bg.Wait() // the gap's warm-up, which ends once no refresh failed
	if got := phpRuns(t, ran); !slices.Equal(got, []string{"/hello-world/ -"}) {
		t.Errorf("PHP ran %q for the gap, want the permalink alone, without the member's field", got)
	}
	again := hitCtx("/hello-world/", agent)
	p.ServeFastHTTP(again)
	if cs := string(again.Response.Header.Peek("Cache-Status")); cs != "ramjet; hit" || string(again.Response.Body()) == string(first.Response.Body()) {
		t.Errorf("the permalink after the gap's refresh: %q %q, want a hit of a new copy", cs, again.Response.Body())
	}
	if n := metricsOf(t, p)["ramjet_purge_gap_refreshes_total"]; n != 1 {
		t.Errorf("ramjet_purge_gap_refreshes_total = %v, want 1", n)
	}
}

// In proxy mode (htaccess_root) a gap's refresh takes the LiteSpeed
// block's rules too: the page they refuse a request without the
// member's field is never asked of the origin.
func TestGapRefreshOfAnHtaccessRootSiteAsksTheOriginOnlyWhatTheRulesAllow(t *testing.T) {
	o := newWarmOrigin(t)
	root := testbed.PublicDir(t)
	writeFile(t, filepath.Join(root, ".htaccess"), "<IfModule LiteSpeed>\n"+memberRule+"</IfModule>\n")
	cfg := lscacheConfig(o.URL)
	cfg.Default.HtaccessRoot = root
	p, base := startProxy(t, cfg)
	get(t, base+"/open")
	get(t, base+"/members/list", "X-Member", "yes")
	o.arm()
	p.Purge(purge.Command{Targets: []purge.Target{{Kind: purge.KindAll, Soft: true}}, Gap: true, Grace: time.Minute})
	p.bg.Wait() // the gap's warm-up, which ends once no refresh failed
	if got := o.seen(); !slices.Equal(got, []string{"/open "}) {
		t.Errorf("the gap's refreshes asked the origin for %q, want /open alone", got)
	}
}
