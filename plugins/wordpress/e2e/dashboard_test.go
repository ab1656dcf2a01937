package wordpress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestDashboardShowsTheSitesOwnStats logs in to wp-admin in headless
// Chromium, through ramjet, and checks the dashboard widget and the admin
// bar show this site's numbers as ramjet's GET /stats gives them to the
// site's token: its hit ratio and requests over the last hour, and the
// URL it did not cache with the reason, linked. The screenshot is kept
// (RAMJET_SCREENSHOT names where, else the test's temporary directory).
func TestDashboardShowsTheSitesOwnStats(t *testing.T) {
	chromium, n := startDashboardSite(t)

	anon := newBrowser("anon", n.URL)
	anon.expect(t, "/", statusMiss, "Post B original")
	anon.expect(t, "/", statusHit, "Post B original")
	anon.expect(t, "/post-b/", statusMiss, "Post B original")
	anon.expect(t, "/post-b/", statusHit, "Post B original")
	if p := anon.get(t, "/?s=original"); !strings.Contains(p.cacheStatus, "detail=no-cache") {
		t.Fatalf("a search: Cache-Status %q, want not cached (detail=no-cache)", p.cacheStatus)
	}
	admin := newBrowser("admin", n.URL)
	loginAs(t, admin, "admin", "admin-pass")

	before := siteStatsOf(t, n.AdminURL)
	if before.Hour.Hits != 2 {
		t.Fatalf("GET /stats with the site's token: %+v, want the 2 hits sent", before.Hour)
	}
	cookies := admin.cookieHeader()
	dom := runChromium(t, chromium, n.URL, cookies, "--dump-dom")
	after := siteStatsOf(t, n.AdminURL)
	// The dashboard read the stats while Chromium's requests (WordPress's
	// own on the way included) were being counted: its numbers are
	// between the two reads, and hold together.
	requests := find(t, dom, `data-ramjet="requests">(\d+)<`, "requests of the last hour")
	var shown uint64
	fmt.Sscan(requests, &shown)
	if shown < before.Hour.Requests || shown > after.Hour.Requests {
		t.Errorf("the widget shows %d requests over the last hour, want %d to %d", shown, before.Hour.Requests, after.Hour.Requests)
	}
	ratio := regexp.QuoteMeta(fmt.Sprintf("%.1f%%", 100*2/float64(shown)))
	for _, re := range []string{
		`data-ramjet="hit-ratio">` + ratio + `<`,
		`data-ramjet="hits">2<`,
		`<li data-ramjet-reason="no-cache"><a href="http://wp\.test/\?s=original">/\?s=original</a>`,
		`<tr data-ramjet-window="hour"><th>Last hour</th><td data-ramjet="requests">` + requests + `</td><td data-ramjet="hit_ratio">` + ratio + `</td>`,
		`id="wp-admin-bar-ramjet-cache"[^>]*>\s*<[^>]*>Ramjet ` + ratio + `<`,
		`Hit ratio ` + ratio + ` of ` + requests + ` requests \(last hour\)`,
		`wp-admin-bar-ramjet-cache-purge-all`,
		`class="button" href="[^"]*admin-post\.php\?action=ramjet_cache_purge[^"]*scope=all`,
	} {
		if !regexp.MustCompile(re).MatchString(dom) {
			i := strings.Index(dom, "ramjet_cache_status")
			t.Errorf("the dashboard lacks %s; widget:\n%.3000s", re, dom[max(i, 0):])
		}
	}

	shot := os.Getenv("RAMJET_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "dashboard.png")
	}
	runChromium(t, chromium, n.URL, cookies, "--screenshot="+shot)
	mustBeAPicture(t, shot)
	t.Logf("screenshot of the dashboard: %s", shot)
}

// startDashboardSite is WordPress behind a ramjet node, and Chromium to
// look at its dashboard with.
func startDashboardSite(t *testing.T) (chromium string, n *node) {
	t.Helper()
	requireStack(t)
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (%v); .ci/deps installs the Debian package chromium", err)
	}
	db := testbed.StartMariaDB(t)
	n = reserveNode(t, "web1")
	wp := installWordPress(t, db, n.AdminURL)
	n.start(t, startOrigin(t, wp.docroot), "")
	return chromium, n
}

// siteStats is the part of GET /stats the dashboard shows.
type siteStats struct {
	Hour struct {
		Requests uint64  `json:"requests"`
		Hits     uint64  `json:"hits"`
		HitRatio float64 `json:"hit_ratio"`
	} `json:"hour"`
}

// siteStatsOf reads wp.test's stats with its token, as the plugin does.
func siteStatsOf(t *testing.T, adminURL string) siteStats {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, adminURL+"/stats?host="+siteHost, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Sites []siteStats }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK || len(body.Sites) != 1 {
		t.Fatalf("GET /stats: %s, %v, %d sites", resp.Status, err, len(body.Sites))
	}
	return body.Sites[0]
}

// cookieHeader is the browser's cookies as a Cookie field.
func (b *browser) cookieHeader() string {
	var out []string
	for k, v := range b.cookies {
		out = append(out, k+"="+v)
	}
	return strings.Join(out, "; ")
}

// runChromium opens wp-admin's dashboard in headless Chromium with one
// more flag (--dump-dom, --screenshot=FILE) and returns its stdout. Its
// requests go through a proxy of the test's that sends them to the ramjet
// at base with the logged-in user's cookies: the browser is that user.
func runChromium(t *testing.T, chromium, base, cookies, flag string) string {
	t.Helper()
	proxy := startCookieProxy(t, base, cookies)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--proxy-server=http://"+proxy, "--window-size=1280,2000",
		"--hide-scrollbars", "--virtual-time-budget=5000", flag, "http://"+siteHost+"/wp-admin/")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", flag, err, stderr.String())
	}
	return stdout.String()
}

// startCookieProxy is an HTTP proxy that sends the requests for the site
// to base, with cookies, and refuses the rest.
func startCookieProxy(t *testing.T, base, cookies string) string {
	t.Helper()
	to, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(to)
		pr.Out.Host = siteHost
		pr.Out.Header.Set("Cookie", cookies)
	}}
	only := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != siteHost { // Chromium's own calls home
			http.Error(w, "not proxied", http.StatusForbidden)
			return
		}
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: only, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close at cleanup
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// mustBeAPicture fails unless path is a PNG with some content: more than
// a few colours (a blank or error page has one or two).
func mustBeAPicture(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screenshot not written: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if colours := countColours(img, 64); colours < 8 {
		t.Fatalf("screenshot %s has %d colours: blank", path, colours)
	}
}

// countColours counts the distinct colours of img up to limit.
func countColours(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}
