package wordpress_test

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rawGet sends target as it is (quotes and angle brackets unescaped, as an
// attacker's client may) to the ramjet at base, for wp.test.
func rawGet(t *testing.T, base, target string) int {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: " + siteHost + "\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The "why not cached" list shows URLs anyone may request. A search for
// markup, requested raw by an anonymous client before the admin opens the
// dashboard, is shown as text and linked to the site: Chromium's DOM of
// the dashboard has no element of it (no script, no img) and the link's
// href keeps wp.test as its host. This guards the widget's esc_url and
// esc_html (it passed when written: nothing to fix).
func TestDashboardShowsHostileURLsAsText(t *testing.T) {
	chromium, n := startDashboardSite(t)
	for _, target := range []string{
		`/?s="><script>document.title='xss'</script>`,
		`/?s='><img/src=x/onerror=document.title='xss'>`,
		`//evil.example/?s=javascript:alert(1)`,
	} {
		if code := rawGet(t, n.URL, target); code >= 500 {
			t.Fatalf("GET %s: %d", target, code)
		}
	}
	admin := newBrowser("admin", n.URL)
	loginAs(t, admin, "admin", "admin-pass")
	dom := runChromium(t, chromium, n.URL, admin.cookieHeader(), "--dump-dom")
	i, j := strings.Index(dom, `<ol class="ramjet-uncached">`), strings.Index(dom, "</ol>")
	if i < 0 || j < i {
		t.Fatalf("the dashboard has no uncached list:\n%.3000s", dom[max(strings.Index(dom, "ramjet_cache_status"), 0):])
	}
	list := dom[i:j]
	t.Logf("the list in Chromium's DOM:\n%s", list)
	if strings.Contains(list, "<script") || strings.Contains(list, "<img") || strings.Contains(dom, "<title>xss") {
		t.Errorf("a requested URL became markup in wp-admin:\n%s", list)
	}
	if !strings.Contains(list, `/?s="&gt;&lt;script&gt;`) || !strings.Contains(list, `&lt;img/src=x/onerror=`) {
		t.Errorf("the hostile searches are not shown as text:\n%s", list)
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(list, -1) {
		if u, err := url.Parse(m[1]); err != nil || u.Host != siteHost || u.Scheme != "http" {
			t.Errorf("a listed URL links to %q, want a page of http://%s", m[1], siteHost)
		}
	}
}
