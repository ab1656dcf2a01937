package proxy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// memberRule refuses /members/ to a request without "X-Member: yes": a
// page a visitor with the field filled, which a request ramjet makes up
// (no such field) must never fetch.
const memberRule = "RewriteEngine On\nRewriteCond %{HTTP:X-Member} !=yes\nRewriteRule ^members/ - [F,L]\n"

// A docroot site with WordPress's .htaccess: after a purge of everything
// its requested permalink is fetched again through the rules and PHP, as
// a visitor's request would be, and is a hit; the page the rules refuse
// to a request without the visitor's field is never run.
func TestWarmUpOfADocrootSiteRunsTheRulesAndPHPAsForAVisitor(t *testing.T) {
	site, ran := memberSite(t)
	site.Warm = &Warm{Concurrency: 1, Rate: 1000, MaxEntries: 100, MaxBusy: 100}
	p := newTestProxy(t, docrootConfig(site), nil)
	const agent = "curl/8.5.0" // neither mobile nor WebP: the plain variant
	for range 3 {
		p.ServeFastHTTP(hitCtx("/hello-world/", agent))
		member := hitCtx("/members/list/", agent)
		member.Request.Header.Set("X-Member", "yes")
		p.ServeFastHTTP(member)
		if cs := string(member.Response.Header.Peek("Cache-Status")); !strings.Contains(cs, "hit") && !strings.Contains(cs, "stored") {
			t.Fatalf("a member's page: %q, want it stored", cs)
		}
	}
	writeFile(t, ran, "")
	p.Purge(purgeEverything)
	waitRuns(t, p, 1)
	if got := phpRuns(t, ran); !slices.Equal(got, []string{"/hello-world/ -"}) {
		t.Errorf("PHP ran %q during the warm-up, want the permalink alone, without the member's field", got)
	}
	ctx := hitCtx("/hello-world/", agent)
	p.ServeFastHTTP(ctx)
	if cs := string(ctx.Response.Header.Peek("Cache-Status")); cs != "ramjet; hit" {
		t.Errorf("the permalink after the warm-up: %q, want a hit", cs)
	}
	m := metricsOf(t, p)
	for name, want := range map[string]float64{
		"ramjet_warm_fetches_total": 1, "ramjet_warm_refused_total": 1,
		`ramjet_site_warm_fetches_total{site="_default"}`: 1, `ramjet_site_warm_refused_total{site="_default"}`: 1,
	} {
		if m[name] != want {
			t.Errorf("%s = %v, want %v", name, m[name], want)
		}
	}
}

// In proxy mode (htaccess_root) the LiteSpeed block's rules apply to the
// made-up request: the page they refuse it is never asked of the origin,
// the one they let through is, with the vary value they set reaching it.
func TestWarmUpOfAnHtaccessRootSiteAsksTheOriginOnlyWhatTheRulesAllow(t *testing.T) {
	o := newWarmOrigin(t)
	root := testbed.PublicDir(t)
	writeFile(t, filepath.Join(root, ".htaccess"), "<IfModule LiteSpeed>\n"+memberRule+"</IfModule>\n")
	cfg := warmConfig(o.URL, &Warm{Concurrency: 1, Rate: 1000, MaxEntries: 100, MaxBusy: 100})
	cfg.Default.HtaccessRoot = root
	p, base := startProxy(t, cfg)
	visit(t, base, "/open", 3)
	visit(t, base, "/members/list", 3, "X-Member", "yes")
	o.arm()
	p.Purge(purgeEverything)
	waitRuns(t, p, 1)
	if got := o.seen(); !slices.Equal(got, []string{"/open "}) {
		t.Errorf("the warm-up asked the origin for %q, want /open alone", got)
	}
	if r := get(t, base+"/open"); r.cacheStatus != "ramjet; hit" {
		t.Errorf("/open after the warm-up: %q, want a hit", r.cacheStatus)
	}
	if n := metricsOf(t, p)["ramjet_warm_refused_total"]; n != 1 {
		t.Errorf("ramjet_warm_refused_total = %v, want 1", n)
	}
}

// phpWritable is a file under dir (within PHP's open_basedir) that PHP,
// whoever it runs as, may write.
func phpWritable(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, "")
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// memberSite is wordpressSite with memberRule first, and a front
// controller that logs each run ("URI X-Member") to ran, answering a
// cacheable page of a copy of its own.
func memberSite(t *testing.T) (site Site, ran string) {
	t.Helper()
	site = wordpressSite(t, true)
	root := site.Docroot.Root
	ran = phpWritable(t, root, "ran.log")
	index := "<?php file_put_contents(" + phpString(ran) + ", $_SERVER['REQUEST_URI'] . ' ' . ($_SERVER['HTTP_X_MEMBER'] ?? '-') . \"\\n\", FILE_APPEND);" +
		" header('X-LiteSpeed-Cache-Control: public,max-age=600'); echo 'page ', $_SERVER['REQUEST_URI'], ' ', bin2hex(random_bytes(4));"
	writeFile(t, filepath.Join(root, "index.php"), index)
	writeFile(t, filepath.Join(root, ".htaccess"), memberRule+readFile(t, filepath.Join(root, ".htaccess")))
	return site, ran
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// phpString quotes s for PHP's single-quoted strings.
func phpString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// phpRuns are the lines the test's index.php wrote to path.
func phpRuns(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
