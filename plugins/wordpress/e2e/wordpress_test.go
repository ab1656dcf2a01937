package wordpress_test

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const (
	statusMiss = "ramjet; fwd=miss; stored"
	statusHit  = "ramjet; hit"

	// fanoutWait bounds how long a purge may take to reach the other node
	// through Redis (measured p99 is about 1 ms).
	fanoutWait = 3 * time.Second
)

// adminMarkers appear only in pages rendered for a logged-in user.
var adminMarkers = []string{"RJ-LOGGED-IN-AS", "wpadminbar", "wp-admin-bar-my-account", "_wpnonce"}

// page is one fetched response.
type page struct {
	status      int
	cacheStatus string
	body        string
	header      http.Header
}

// browser fetches through one ramjet node with the site's Host header and
// its own cookies (sent to every path, which is all WordPress needs here).
type browser struct {
	name    string
	base    string
	host    string // the Host header; "" = siteHost
	cookies map[string]string
	headers map[string]string // sent on every request (User-Agent, Authorization)
	client  *http.Client
}

func newBrowser(name, base string) *browser {
	return &browser{
		name:    name,
		base:    base,
		cookies: map[string]string{},
		client: &http.Client{
			Timeout:       15 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// on returns a browser with the same cookies talking to another node.
func (b *browser) on(base string) *browser {
	c := newBrowser(b.name, base)
	for k, v := range b.cookies {
		c.cookies[k] = v
	}
	return c
}

func (b *browser) do(t *testing.T, method, path string, form url.Values) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = cmp.Or(b.host, siteHost)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range b.headers {
		req.Header.Set(k, v)
	}
	var cookies []string
	for k, v := range b.cookies {
		cookies = append(cookies, k+"="+v)
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s %s: %v", b.name, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s %s: read body: %v", b.name, method, path, err)
	}
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 || c.Value == "" || c.Value == "deleted" {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return page{status: resp.StatusCode, cacheStatus: resp.Header.Get("Cache-Status"), body: string(data), header: resp.Header}
}

// lsHeaders lists the LSCache headers the origin sent (ramjet passes them
// on with debug_headers), for failure messages.
func (p page) lsHeaders() string {
	var out []string
	for k, v := range p.header {
		if strings.HasPrefix(k, "X-Litespeed-") || strings.HasPrefix(k, "X-Ramjet-") {
			out = append(out, k+": "+strings.Join(v, " | "))
		}
	}
	if len(out) == 0 {
		return "no X-LiteSpeed headers"
	}
	return strings.Join(out, "; ")
}

func (b *browser) get(t *testing.T, path string) page {
	t.Helper()
	p := b.do(t, http.MethodGet, path, nil)
	if p.status != http.StatusOK {
		t.Fatalf("%s GET %s: status %d (Cache-Status %q), want 200; body:\n%.2000s", b.name, path, p.status, p.cacheStatus, p.body)
	}
	return p
}

// expect fetches path and checks its Cache-Status and that the body
// contains every string in want.
func (b *browser) expect(t *testing.T, path, cacheStatus string, want ...string) page {
	t.Helper()
	p := b.get(t, path)
	if p.cacheStatus != cacheStatus {
		t.Errorf("%s GET %s: Cache-Status %q, want %q (%s)", b.name, path, p.cacheStatus, cacheStatus, p.lsHeaders())
	}
	for _, w := range want {
		if !strings.Contains(p.body, w) {
			t.Errorf("%s GET %s: body lacks %q", b.name, path, w)
		}
	}
	return p
}

// expectFresh checks that path was purged: the next request (immediate)
// or, on a node that learns of the purge through Redis, a request within
// fanoutWait is fetched from the origin, stored, and contains want.
func (b *browser) expectFresh(t *testing.T, path, want string, immediate bool) {
	t.Helper()
	var p page
	testbed.Poll(fanoutWait, func() bool {
		p = b.get(t, path)
		return immediate || p.cacheStatus != statusHit
	})
	if p.cacheStatus != statusMiss {
		t.Errorf("%s GET %s after the purge: Cache-Status %q, want %q (%s)", b.name, path, p.cacheStatus, statusMiss, p.lsHeaders())
	}
	if !strings.Contains(p.body, want) {
		t.Errorf("%s GET %s after the purge: body lacks %q", b.name, path, want)
	}
}

func noAdminMarkers(t *testing.T, who, path string, p page) {
	t.Helper()
	for _, m := range adminMarkers {
		if strings.Contains(p.body, m) {
			t.Errorf("%s GET %s (Cache-Status %q): anonymous response contains admin marker %q", who, path, p.cacheStatus, m)
		}
	}
}

// TestWordPressThroughRamjet installs WordPress with the ramjet-cache
// plugin behind two ramjet nodes sharing purges through Redis, and checks
// issue 6's flows on both nodes: with nginx + php-fpm as the origin, with
// Apache + php-fpm configured as README says (issue 15), and with ramjet
// serving the docroot through its own php-cgi workers.
func TestWordPressThroughRamjet(t *testing.T) {
	requireStack(t)
	t.Run("NginxPHPFPM", func(t *testing.T) {
		checkFlows(t, func(t *testing.T, wp *site, n *node, redisURL string) {
			if wp.origin == "" {
				wp.origin = startOrigin(t, wp.docroot)
			}
			n.start(t, wp.origin, redisURL)
		})
	})
	t.Run("ApachePHPFPM", func(t *testing.T) {
		checkFlows(t, func(t *testing.T, wp *site, n *node, redisURL string) {
			if wp.origin == "" {
				wp.origin = startApacheOrigin(t, wp.docroot)
			}
			n.start(t, wp.origin, redisURL)
		})
	})
	t.Run("Docroot", func(t *testing.T) {
		checkFlows(t, func(t *testing.T, wp *site, n *node, redisURL string) {
			n.start(t, "", redisURL, "--docroot", wp.docroot, "--php-workers", "2")
		})
	})
}

// checkFlows sets up MariaDB, Redis and WordPress, starts two ramjet nodes
// with startNode and runs the flows through them.
func checkFlows(t *testing.T, startNode func(t *testing.T, wp *site, n *node, redisURL string)) {
	start := time.Now()
	db := testbed.StartMariaDB(t)
	redisURL := testbed.StartRedis(t).URL
	nodeA, nodeB := reserveNode(t, "web1"), reserveNode(t, "web2")
	wp := installWordPress(t, db, nodeA.AdminURL)
	startNode(t, wp, nodeA, redisURL)
	startNode(t, wp, nodeB, redisURL)
	t.Logf("stack up in %v", time.Since(start).Round(time.Millisecond))

	anonA, anonB := newBrowser("anon@web1", nodeA.URL), newBrowser("anon@web2", nodeB.URL)
	pages := []struct{ path, want string }{
		{"/", "Post B original"},
		{"/post-b/", "Post B original"},
		{"/post-d/", "Post D original"},
		{"/category/news/", "Post B original"},
		{"/tag/featured/", "Post B original"},
		{"/author/writer/", "Post B original"},
		{"/feed/", "Post B original"},
	}

	t.Run("AnonymousMissThenHit", func(t *testing.T) {
		for _, b := range []*browser{anonA, anonB} {
			for _, pg := range pages {
				noAdminMarkers(t, b.name, pg.path, b.expect(t, pg.path, statusMiss, pg.want))
				noAdminMarkers(t, b.name, pg.path, b.expect(t, pg.path, statusHit, pg.want))
			}
		}
	})

	// Another site on the same nodes: cached now, and still cached after
	// every purge WordPress sends (its token and its purge headers reach
	// wp.test only).
	neighbours := []*browser{newBrowser("neighbour@web1", nodeA.URL), newBrowser("neighbour@web2", nodeB.URL)}
	for _, b := range neighbours {
		b.host = neighbourHost
		b.expect(t, "/readme.html", statusMiss, "WordPress")
		b.expect(t, "/readme.html", statusHit, "WordPress")
	}

	t.Run("EditTitlePurgesItsPagesOnEveryNode", func(t *testing.T) {
		out := runPHP(t, nil, "testdata/edit.php", wp.docroot, "title", fmt.Sprint(wp.ids["post_b"]), "Post B edited")
		if !strings.Contains(out, `"queued":null`) {
			t.Fatalf("edit.php: purge was queued instead of sent through the admin API: %s", out)
		}
		for _, path := range []string{"/post-b/", "/", "/category/news/", "/tag/featured/", "/author/writer/", "/feed/"} {
			anonA.expectFresh(t, path, "Post B edited", true)
			anonB.expectFresh(t, path, "Post B edited", false)
		}
		// Post D shares B's category and tag but does not show B: it stays cached.
		anonA.expect(t, "/post-d/", statusHit, "Post D original")
		anonB.expect(t, "/post-d/", statusHit, "Post D original")
	})

	t.Run("ApprovedCommentShowsNextRequest", func(t *testing.T) {
		for _, b := range []*browser{anonA, anonB} {
			if p := b.get(t, "/post-b/"); strings.Contains(p.body, "RJ-COMMENT-MARKER") {
				t.Fatalf("%s: pending comment shown before approval", b.name)
			}
			b.expect(t, "/post-b/", statusHit)
		}
		out := runPHP(t, nil, "testdata/edit.php", wp.docroot, "approve", fmt.Sprint(wp.ids["comment"]))
		if !strings.Contains(out, `"queued":null`) {
			t.Fatalf("edit.php: purge was queued instead of sent: %s", out)
		}
		anonA.expectFresh(t, "/post-b/", "RJ-COMMENT-MARKER", true)
		anonB.expectFresh(t, "/post-b/", "RJ-COMMENT-MARKER", false)
		anonA.expect(t, "/post-d/", statusHit)
	})

	t.Run("AdminNeverSharesThePublicCache", func(t *testing.T) {
		admin := newBrowser("admin@web1", nodeA.URL)
		admin.cookies["wordpress_test_cookie"] = "WP%20Cookie%20check"
		admin.get(t, "/wp-login.php")
		login := admin.do(t, http.MethodPost, "/wp-login.php", url.Values{
			"log": {"admin"}, "pwd": {"admin-pass"}, "testcookie": {"1"}, "redirect_to": {"http://wp.test/wp-admin/"},
		})
		if login.status != http.StatusFound {
			t.Fatalf("login: status %d, want 302; body:\n%.1500s", login.status, login.body)
		}
		loggedIn := false
		for k := range admin.cookies {
			loggedIn = loggedIn || strings.HasPrefix(k, "wordpress_logged_in_")
		}
		if !loggedIn {
			t.Fatalf("login set no wordpress_logged_in_ cookie; cookies %v", admin.cookies)
		}

		dash := admin.get(t, "/wp-admin/")
		if dash.cacheStatus == statusHit || !strings.Contains(dash.body, "Dashboard") {
			t.Errorf("admin dashboard: Cache-Status %q, has Dashboard=%v", dash.cacheStatus, strings.Contains(dash.body, "Dashboard"))
		}
		// A cached page: the admin gets their own render, with the admin bar
		// (an ESI block ramjet assembles), twice, never the public copy.
		for i := 0; i < 2; i++ {
			p := admin.get(t, "/post-d/")
			if strings.HasPrefix(p.cacheStatus, statusHit) {
				t.Errorf("admin GET /post-d/ #%d: served from cache (%q)", i+1, p.cacheStatus)
			}
			for _, m := range []string{"RJ-LOGGED-IN-AS admin", `id="wpadminbar"`, "ramjet-cache-purge-all"} {
				if !strings.Contains(p.body, m) {
					t.Errorf("admin GET /post-d/ #%d: lacks %q (Cache-Status %q)", i+1, m, p.cacheStatus)
				}
			}
			if strings.Contains(p.body, "<esi:") {
				t.Errorf("admin GET /post-d/: ESI markup reached the browser")
			}
		}
		// A page the admin sees first must not be stored for anonymous visitors.
		admin.get(t, "/2024/01/")
		admin.get(t, "/post-a/")
		for _, b := range []*browser{anonA, anonB} {
			for _, path := range []string{"/2024/01/", "/post-a/", "/post-d/", "/"} {
				noAdminMarkers(t, b.name, path, b.get(t, path))
			}
		}
		anonA.expect(t, "/post-d/", statusHit)

		// The admin bar's "Purge all" goes through ramjet: its purge rides on
		// the redirect's X-LiteSpeed-Purge header and fans out to web2.
		link := regexp.MustCompile(`href=['"]([^'"]*admin-post\.php\?action=ramjet_cache_purge[^'"]*scope=all[^'"]*)['"]`).FindStringSubmatch(admin.get(t, "/post-d/").body)
		if link == nil {
			t.Fatal("admin bar has no Purge all link")
		}
		u, err := url.Parse(strings.NewReplacer("&amp;", "&", "&#038;", "&").Replace(link[1]))
		if err != nil {
			t.Fatal(err)
		}
		res := admin.do(t, http.MethodGet, u.RequestURI(), nil)
		if res.status != http.StatusFound {
			t.Fatalf("purge all: status %d, want 302; body:\n%.1000s", res.status, res.body)
		}
		anonA.expectFresh(t, "/post-d/", "Post D original", true)
		anonB.expectFresh(t, "/post-d/", "Post D original", false)
	})

	t.Run("NeighbourSiteUntouchedByWordPressPurges", func(t *testing.T) {
		for _, b := range neighbours {
			b.expect(t, "/readme.html", statusHit, "WordPress")
		}
	})
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}
