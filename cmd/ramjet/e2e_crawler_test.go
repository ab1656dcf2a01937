package main_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// The LiteSpeed Cache plugin's crawler as it introduces itself.
const pluginCrawlerUA = "User-Agent: lscache_runner Mobile iPhone"

// startCrawlerSite runs ramjet in docroot mode with two PHP workers and
// the crawler block given (YAML under defaults.crawler).
func startCrawlerSite(t *testing.T, crawler string) *testbed.Ramjet {
	t.Helper()
	root := phpDocroot(t)
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  docroot:\n    root: %q\n    php:\n      workers: 2\n      queue_wait: 30s\n  crawler:\n", root)
	for _, line := range strings.Split(strings.TrimSpace(crawler), "\n") {
		b.WriteString("    " + strings.TrimSpace(line) + "\n")
	}
	return startRamjet(t, "", "--config", testbed.WriteConfig(t, "", b.String()))
}

// busyWorkers is how many of the site's PHP workers run a request.
func busyWorkers(t *testing.T, rj *testbed.Ramjet) int {
	n := 0
	for _, w := range phpWorkers(t, rj) {
		if w.State == "busy" {
			n++
		}
	}
	return n
}

func TestCrawlerMissWaitsForSparePHPWhileVisitorsAreServed(t *testing.T) {
	rj := startCrawlerSite(t, "max_misses: 2\nmax_busy: 50\nretry_after: 7s\nusleep: 2000\nload_limit: 3")
	c := &http.Client{Timeout: 30 * time.Second}
	mustStatus(t, get(t, c, rj.URL+"/crawled.php?id=warm"), 200, "warming a page")

	// Visitors load the site: both workers run a slow script.
	visitors := make(chan result, 2)
	for i := range 2 {
		go func() {
			r, err := tryDo(c, "GET", fmt.Sprintf("%s/sleep.php?ms=3000&v=%d", rj.URL, i), nil)
			if err != nil {
				r = result{Status: -1, Body: []byte(err.Error())}
			}
			visitors <- r
		}()
	}
	if !testbed.Poll(10*time.Second, func() bool { return busyWorkers(t, rj) == 2 }) {
		t.Fatalf("the visitors do not keep both workers busy: %+v", phpWorkers(t, rj))
	}

	start := time.Now()
	r := get(t, c, rj.URL+"/crawled.php?id=1", pluginCrawlerUA)
	mustStatus(t, r, 503, "a crawler miss while visitors keep PHP busy")
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the refused crawler miss took %v: it waited for a worker", took)
	}
	if got := r.Header.Get("Retry-After"); got != "7" {
		t.Fatalf("Retry-After %q, want the configured 7", got)
	}
	if got := r.Header.Get("X-LiteSpeed-Cache"); got != "miss" {
		t.Fatalf("X-LiteSpeed-Cache %q on the refusal: the plugin would count the URL towards its blocklist", got)
	}
	// The plugin's crawler asks with "Cache-Control: max-age=0"; a hit
	// is still a hit, as on LiteSpeed.
	hit := get(t, c, rj.URL+"/crawled.php?id=warm", pluginCrawlerUA, "Cache-Control: max-age=0")
	mustStatus(t, hit, 200, "a crawler hit while PHP is busy")
	if !hit.CacheStatus().Hit {
		t.Fatalf("crawler hit: Cache-Status %q", hit.CacheStatus().Raw)
	}
	for range 2 {
		if v := <-visitors; v.Status != 200 {
			t.Fatalf("a visitor beside the crawler: %d %.200q", v.Status, v.Body)
		}
	}

	// Idle again: the crawler's miss is filled, for the next visitor.
	if !testbed.Poll(10*time.Second, func() bool { return busyWorkers(t, rj) == 0 }) {
		t.Fatalf("workers still busy: %+v", phpWorkers(t, rj))
	}
	filled := get(t, c, rj.URL+"/crawled.php?id=1", pluginCrawlerUA)
	mustStatus(t, filled, 200, "a crawler miss on an idle site")
	if cs := filled.CacheStatus(); cs.Hit || !cs.Stored {
		t.Fatalf("crawler miss on an idle site: Cache-Status %q, want a stored miss", cs.Raw)
	}
	visitor := get(t, c, rj.URL+"/crawled.php?id=1")
	if !visitor.CacheStatus().Hit || string(visitor.Body) != string(filled.Body) {
		t.Fatalf("the visitor after the crawler: Cache-Status %q", visitor.CacheStatus().Raw)
	}

	// What the plugin's crawler reads from the server, from the config.
	for _, want := range []string{"X-LSCACHE=on,crawler\n", "CRAWLER_USLEEP=2000\n", "CRAWLER_LOAD_LIMIT=3\n",
		"CRAWLER_LOAD_LIMIT_ENFORCE=(unset)\n"} {
		if !strings.Contains(string(filled.Body), want) {
			t.Errorf("PHP's server variables lack %q:\n%s", want, filled.Body)
		}
	}
}

func TestCrawlerOffTellsThePluginAndRefusesEveryMiss(t *testing.T) {
	rj := startCrawlerSite(t, "max_misses: 0\nload_limit_enforce: 1")
	c := &http.Client{Timeout: 30 * time.Second}
	page := get(t, c, rj.URL+"/crawled.php?id=visitor")
	mustStatus(t, page, 200, "a visitor")
	for _, want := range []string{"X-LSCACHE=on\n", "CRAWLER_LOAD_LIMIT_ENFORCE=1\n", "CRAWLER_USLEEP=(unset)\n"} {
		if !strings.Contains(string(page.Body), want) {
			t.Errorf("PHP's server variables lack %q:\n%s", want, page.Body)
		}
	}
	mustStatus(t, get(t, c, rj.URL+"/crawled.php?id=2", pluginCrawlerUA), 503, "a crawler miss with max_misses 0")
	for _, series := range []string{"ramjet_crawler_refused_total", `ramjet_site_crawler_refused_total{site="_default"}`} {
		if n := metricValue(t, rj.AdminURL, series); n != 1 {
			t.Errorf("%s = %v, want 1", series, n)
		}
	}
	hit := get(t, c, rj.URL+"/crawled.php?id=visitor", pluginCrawlerUA)
	if hit.Status != 200 || !hit.CacheStatus().Hit {
		t.Fatalf("a crawler hit with max_misses 0: %d %q", hit.Status, hit.CacheStatus().Raw)
	}
}

func TestCrawlerMissWaitsForSpareOriginConnections(t *testing.T) {
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, "", "origin:\n  max_conns: 2\n  max_queue: 0\n"+
		"defaults:\n  crawler:\n    max_busy: 50\n    retry_after: 3s\n")
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := &http.Client{Timeout: 30 * time.Second}
	const page = "/echo.php?h[]=Cache-Control:+max-age%3D60&page="

	// A visitor's slow page holds one of the origin's two connections.
	visitor := make(chan result, 1)
	go func() {
		r, err := tryDo(c, "GET", rj.URL+"/echo.php?sleep_ms=3000&mark=slow", nil)
		if err != nil {
			r = result{Status: -1, Body: []byte(err.Error())}
		}
		visitor <- r
	}()
	if !testbed.Poll(10*time.Second, func() bool { return o.marked("slow") }) {
		t.Fatal("the visitor's slow page never reached the origin")
	}
	r := get(t, c, rj.URL+page+"1", pluginCrawlerUA)
	mustStatus(t, r, 503, "a crawler miss with half the origin's connections busy")
	if got := r.Header.Get("Retry-After"); got != "3" {
		t.Fatalf("Retry-After %q, want 3", got)
	}
	other := get(t, c, rj.URL+page+"1")
	mustStatus(t, other, 200, "another visitor beside the refused crawler")
	if v := <-visitor; v.Status != 200 {
		t.Fatalf("the slow visitor: %d %.200q", v.Status, v.Body)
	}

	// The origin idle: the crawler fills a page the next visitor hits.
	filled := get(t, c, rj.URL+page+"2", pluginCrawlerUA)
	mustStatus(t, filled, 200, "a crawler miss on an idle origin")
	if cs := filled.CacheStatus(); !cs.Stored {
		t.Fatalf("crawler miss on an idle origin: Cache-Status %q", cs.Raw)
	}
	if hit := get(t, c, rj.URL+page+"2"); !hit.CacheStatus().Hit || hit.ID() != filled.ID() {
		t.Fatalf("the visitor after the crawler: Cache-Status %q", hit.CacheStatus().Raw)
	}
}
