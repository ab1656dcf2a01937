package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// The warm-up after purges on the sites most WordPress users run: docroot
// sites (PHP through ramjet's php-cgi pool) and proxied sites whose
// .htaccess rules ramjet applies (htaccess_root). Each page is fetched
// again by a request ramjet makes up (GET, the URL, Host, nothing of a
// visitor's) through the visitor's stages, so the rules refuse, redirect
// and vary it as they would a visitor's request.

// memberRules refuse /members/ (docroot) or /e/members… (proxy mode) to
// a request without "X-Member: yes": a member filled it, and a request
// ramjet makes up never has the field.
const memberRules = "RewriteEngine On\nRewriteCond %{HTTP:X-Member} !=yes\nRewriteRule ^(e/)?members - [F,L]\n"

// warmIndexPHP is a docroot's front controller: every permalink is a
// cacheable page that takes 300 ms, whose runs are logged (URI and the
// X-Member field) to RAN and counted at once ("now top") in CONC.
const warmIndexPHP = `<?php
function bump(string $file, int $by): void {
    $f = fopen($file, 'c+');
    flock($f, LOCK_EX);
    [$now, $top] = array_map('intval', explode(' ', trim(stream_get_contents($f)) ?: '0 0') + [0, 0]);
    $now += $by;
    $top = max($top, $now);
    ftruncate($f, 0);
    rewind($f);
    fwrite($f, "$now $top");
    flock($f, LOCK_UN);
    fclose($f);
}
file_put_contents('RAN', $_SERVER['REQUEST_URI'] . ' ' . ($_SERVER['HTTP_X_MEMBER'] ?? '-') . "\n", FILE_APPEND | LOCK_EX);
bump('CONC', 1);
usleep(300000);
bump('CONC', -1);
header('Cache-Control: public, max-age=600');
header('Content-Type: text/plain; charset=utf-8');
echo 'page ', $_SERVER['REQUEST_URI'], ' ', bin2hex(random_bytes(8)), "\n";
`

// warmDocroot writes a WordPress-like docroot (the plugin's LiteSpeed
// block, memberRules, the front controller's rewrite) and returns it
// with the files its PHP logs runs to and counts them in.
func warmDocroot(t *testing.T) (root, ran, conc string) {
	t.Helper()
	root = filepath.Join(testbed.PublicDir(t), "www")
	marks := filepath.Join(root, "marks")
	ran, conc = filepath.Join(marks, "ran"), filepath.Join(marks, "conc")
	write(t, filepath.Join(root, "index.php"), strings.NewReplacer("RAN", ran, "CONC", conc).Replace(warmIndexPHP))
	write(t, filepath.Join(root, ".htaccess"), lscacheBlock+memberRules+
		"RewriteCond %{REQUEST_FILENAME} !-f\nRewriteCond %{REQUEST_FILENAME} !-d\nRewriteRule . /index.php [L]\n")
	for _, f := range []string{ran, conc} {
		write(t, f, "")
		if err := os.Chmod(f, 0o666); err != nil { // PHP runs as www-data under root
			t.Fatal(err)
		}
	}
	return root, ran, conc
}

// topConcurrency is the most runs the docroot's PHP had at once since
// conc was last emptied.
func topConcurrency(t *testing.T, conc string) int {
	t.Helper()
	b, err := os.ReadFile(conc)
	if err != nil {
		t.Fatal(err)
	}
	var now, top int
	if len(b) > 0 {
		if _, err := fmt.Sscanf(string(b), "%d %d", &now, &top); err != nil {
			t.Fatalf("%s: %q: %v", conc, b, err)
		}
	}
	return top
}

// After a purge of everything on a docroot site with WordPress's
// .htaccess, the popular permalinks are hits of new copies before any
// visitor asks, PHP having run them at most warm.concurrency at once;
// the members' page the rules refuse a request without the member's
// field is never run, and the mobile variant (which a made-up request
// does not select) is left to its visitors.
func TestWarmUpOfADocrootSiteRunsPHPThroughTheHtaccessRules(t *testing.T) {
	root, ran, conc := warmDocroot(t)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("defaults:\n  docroot:\n    root: %q\n    front_controller: \"\"\n    htaccess: on\n"+
		"    php:\n      workers: 4\n"+
		"  warm:\n    enabled: true\n    concurrency: 2\n    rate: 1000\n    max_entries: 100\n    max_busy: 75\n", root))
	rj := startRamjet(t, "", "--config", cfg)
	c := newClient(t)
	const posts = 5
	post := func(i int) string { return fmt.Sprintf("%s/post-%d/", rj.URL, i) }
	before := map[int]string{}
	for i := range posts {
		for range 3 {
			r := get(t, c, post(i))
			mustStatus(t, r, 200, "filling a post")
			before[i] = string(r.Body)
		}
	}
	members := rj.URL + "/members/list/"
	for range 3 {
		mustStatus(t, get(t, c, members, "X-Member: yes"), 200, "a member filling the members' page")
	}
	mustStatus(t, get(t, c, members), 403, "the members' page without the member's field")
	for range 2 {
		mustStatus(t, get(t, c, post(0), mobileUA), 200, "a mobile visitor filling its variant")
	}
	write(t, ran, "")
	write(t, conc, "")

	mustStatus(t, adminPost(t, c, rj, "all=1", "", ""), http.StatusOK, "purge of everything")
	waitWarmRuns(t, rj, 1)

	ranNow, err := os.ReadFile(ran)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ranNow), "/members/") {
		t.Errorf("the warm-up ran the members' page the rules refuse it:\n%s", ranNow)
	}
	if n := strings.Count(string(ranNow), "\n"); n != posts {
		t.Errorf("PHP ran %d pages during the warm-up, want the %d posts:\n%s", n, posts, ranNow)
	}
	if top := topConcurrency(t, conc); top > 2 {
		t.Errorf("PHP ran %d pages at once during the warm-up, want at most warm.concurrency 2", top)
	}
	for i := range posts {
		r := get(t, c, post(i))
		if cs := r.CacheStatus(); !cs.FreshHit() || string(r.Body) == before[i] {
			t.Errorf("post %d after the purge and the warm-up: %q, want a hit of a copy fetched again", i, cs.Raw)
		}
	}
	if cs := get(t, c, post(0), mobileUA).CacheStatus(); cs.Hit {
		t.Errorf("the mobile variant after the warm-up: %q, want a miss (a made-up request is no mobile visitor's)", cs.Raw)
	}
	for name, want := range map[string]float64{
		"ramjet_warm_fetches_total": posts, "ramjet_warm_refused_total": 1,
		`ramjet_site_warm_fetches_total{site="_default"}`: posts, `ramjet_site_warm_refused_total{site="_default"}`: 1,
	} {
		if n := metricValue(t, rj.AdminURL, name); n != want {
			t.Errorf("%s = %v, want %v", name, n, want)
		}
	}
}

// In proxy mode, htaccess_root in front of nginx and php-fpm: after a
// purge of everything the popular pages are hits again before any
// visitor asks, at most warm.concurrency at once at the origin, and the
// page the LiteSpeed block refuses a request without the member's field
// is never asked of nginx.
func TestWarmUpOfAnHtaccessRootSiteNeverAsksTheOriginWhatTheRulesRefuse(t *testing.T) {
	o := startOrigin(t)
	root := testbed.PublicDir(t)
	write(t, filepath.Join(root, ".htaccess"), lscacheBlock+"<IfModule LiteSpeed>\n"+memberRules+"</IfModule>\n")
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("origin:\n  max_conns: 4\n"+
		"hosts:\n  - names: [wp.test]\n    htaccess_root: %q\n"+
		"    warm:\n      enabled: true\n      concurrency: 2\n      rate: 1000\n      max_entries: 100\n      max_busy: 75\n", root))
	rj := startRamjet(t, o.URL, "--config", cfg)
	c := newClient(t)
	host := "Host: wp.test"
	const pages, sleepMS = 5, 300
	before := map[int]string{}
	for p := range pages {
		for range 3 {
			r := get(t, c, warmPage(rj.URL, p, sleepMS), host)
			mustStatus(t, r, 200, "filling a page")
			before[p] = string(r.Body)
		}
	}
	ns := nsFor(t)
	members := "/e/members-" + ns
	for range 3 {
		mustStatus(t, get(t, c, rj.URL+members+"?h[]=Cache-Control:+public,+max-age=600", host, "X-Member: yes"), 200, "a member filling the members' page")
	}
	asked := o.waitRequests(t, members, 1)
	originConcurrency(t, c, o, true)

	mustStatus(t, adminPost(t, c, rj, "all=1", "", ""), http.StatusOK, "purge of everything")
	waitWarmRuns(t, rj, 1)

	if top := originConcurrency(t, c, o, false); top > 2 {
		t.Errorf("the origin had %d requests at once during the warm-up, want at most warm.concurrency 2", top)
	}
	for p := range pages {
		r := get(t, c, warmPage(rj.URL, p, sleepMS), host)
		if cs := r.CacheStatus(); !cs.FreshHit() || string(r.Body) == before[p] {
			t.Errorf("page %d after the purge and the warm-up: %q, want a hit of a copy fetched again", p, cs.Raw)
		}
	}
	o.web.SyncLog(t)
	if n := o.Requests(members); n != asked {
		t.Errorf("nginx was asked for the members' page %d times, %d before the purge: the warm-up asked for what the rules refuse it", n, asked)
	}
	for name, want := range map[string]float64{
		"ramjet_warm_fetches_total": pages, "ramjet_warm_refused_total": 1,
		`ramjet_site_warm_fetches_total{site="wp.test"}`: pages,
	} {
		if n := metricValue(t, rj.AdminURL, name); n != want {
			t.Errorf("%s = %v, want %v", name, n, want)
		}
	}
}
