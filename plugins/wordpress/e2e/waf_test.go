package wordpress_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// editorContent is what the block editor saves for a post: block
// comments, quotes and apostrophes, a link with a query, a code block
// about SQL and a custom HTML embed with a script: all of it what the
// CRS flags when it comes from a stranger.
const editorContent = `<!-- wp:paragraph -->
<p>It's a "quoted" <strong>bold</strong> claim, see <a href="https://example.com/?a=1&amp;b=2">this</a>.</p>
<!-- /wp:paragraph -->

<!-- wp:code -->
<pre class="wp-block-code"><code>SELECT name, email FROM users WHERE id = 1 OR 1=1; -- don't do this
UNION SELECT password FROM wp_users</code></pre>
<!-- /wp:code -->

<!-- wp:html -->
<blockquote class="twitter-tweet"><a href="https://twitter.com/x/status/1">tweet</a></blockquote><script async src="https://platform.twitter.com/widgets.js" charset="utf-8"></script>
<!-- /wp:html -->

<!-- wp:image {"id":7,"sizeSlug":"large","linkDestination":"none"} -->
<figure class="wp-block-image size-large"><img src="http://wp.test/wp-content/uploads/2024/01/photo.png" alt="" class="wp-image-7"/></figure>
<!-- /wp:image -->`

// TestWordPressBehindTheWAF: a real WordPress with the WAF in block mode
// at paranoia 1 and the wordpress exclusions: what its users do in the
// admin and on the site succeeds, attacks get 403. A second ramjet
// without the exclusions blocks the editor's save: the exclusions are
// what lets it through.
func TestWordPressBehindTheWAF(t *testing.T) {
	requireStack(t)
	db := testbed.StartMariaDB(t)
	guarded, plain := reserveNode(t, "waf"), reserveNode(t, "waf-plain")
	wp := testbed.InstallWordPress(t, testbed.WordPressConfig{
		DB: db,
		Content: map[string]string{
			"plugins/ramjet-cache": "../ramjet-cache",
			"plugins/akismet":      "/usr/share/wordpress/wp-content/plugins/akismet",
			"themes/ramjet-e2e":    "testdata/ramjet-e2e-theme",
		},
		Defines: map[string]string{"RAMJET_ADMIN_URL": guarded.AdminURL},
	})
	out := runPHP(t, nil, "testdata/setup.php", wp.Docroot)
	ids := map[string]int{}
	if err := json.Unmarshal([]byte(lastLine(out)), &ids); err != nil {
		t.Fatalf("setup.php output %q: %v", out, err)
	}
	// Each php-fpm child serves one request: after processing an uploaded
	// image, Debian's PHP 8.2 has crashed (SIGSEGV) on the child's next
	// request, on 724ee47 as now (2 of 5 runs here), which is PHP's and
	// not what this tests.
	origin := startOriginWith(t, wp.Docroot, "php_admin_flag[display_errors] = off\nphp_admin_value[memory_limit] = 256M\npm.max_requests = 1\n", "")
	startWAFNode(t, guarded, origin, "[wordpress]")
	startWAFNode(t, plain, origin, "[]")

	admin := newBrowser("admin", guarded.URL)
	loginAs(t, admin, "admin", "admin-pass")
	restNonce := find(t, admin.get(t, "/wp-admin/post-new.php").body, `createNonceMiddleware\(\s*"([0-9a-f]+)"\s*\)`, "REST nonce")
	rest := func(b *browser, method, path string, body []byte, ctype string, hdr ...string) page {
		t.Helper()
		return b.send(t, method, path, bytes.NewReader(body), append([]string{"Content-Type: " + ctype, "X-WP-Nonce: " + restNonce}, hdr...)...)
	}
	postID := ids["post_b"]
	save, _ := json.Marshal(map[string]any{"id": postID, "title": `Post B: it's "edited"`, "content": editorContent, "status": "publish"})

	t.Run("the block editor saves a post through the REST API", func(t *testing.T) {
		p := rest(admin, "POST", fmt.Sprintf("/wp-json/wp/v2/posts/%d?_locale=user", postID), save, "application/json", "X-HTTP-Method-Override: PUT")
		wantOK(t, "REST save", p)
		if !strings.Contains(p.body, `twitter-tweet`) {
			t.Errorf("REST save answered without the saved content:\n%.500s", p.body)
		}
	})
	t.Run("media upload through the REST API and async-upload.php", func(t *testing.T) {
		ctype, body := pngUpload(t, "file", "holiday photo.png", nil)
		wantOK(t, "REST media upload", rest(admin, "POST", "/wp-json/wp/v2/media", body, ctype, "Content-Disposition: attachment; filename=\"holiday photo.png\""))
		nonce := find(t, admin.get(t, "/wp-admin/media-new.php").body, `"multipart_params":\{[^}]*"_wpnonce":"([0-9a-f]+)"`, "upload nonce")
		// A text file: a second image in a row has made Debian's php-fpm
		// crash (SIGSEGV) here, which is PHP's, not what this tests.
		ctype, body = fileUpload(t, "async-upload", "notes.txt", []byte("Notes: it's \"quoted\"; SELECT 1;\n"),
			map[string]string{"name": "notes.txt", "action": "upload-attachment", "_wpnonce": nonce})
		p := admin.send(t, "POST", "/wp-admin/async-upload.php", bytes.NewReader(body), "Content-Type: "+ctype)
		wantOK(t, "async-upload.php", p)
		if !strings.Contains(p.body, `"success":true`) {
			t.Errorf("async-upload.php: %.500s", p.body)
		}
	})
	t.Run("admin-ajax heartbeat and media library", func(t *testing.T) {
		dash := admin.get(t, "/wp-admin/post.php?post="+fmt.Sprint(postID)+"&action=edit")
		hb := find(t, dash.body, `heartbeatSettings\s*=\s*\{"nonce":"([0-9a-f]+)"`, "heartbeat nonce")
		p := admin.do(t, "POST", "/wp-admin/admin-ajax.php", url.Values{
			"data[wp-refresh-post-lock][post_id]": {fmt.Sprint(postID)},
			"data[wp-refresh-post-lock][lock]":    {"1700000000:1"},
			"data[wp_autosave][post_title]":       {`It's "quoted"`},
			"interval":                            {"60"}, "_nonce": {hb}, "action": {"heartbeat"},
			"screen_id": {"post"}, "has_focus": {"false"},
		})
		wantOK(t, "heartbeat", p)
		p = admin.do(t, "POST", "/wp-admin/admin-ajax.php", url.Values{
			"action": {"query-attachments"}, "post_id": {"0"}, "query[orderby]": {"date"}, "query[order]": {"DESC"},
			"query[posts_per_page]": {"80"}, "query[paged]": {"1"},
		})
		wantOK(t, "query-attachments", p)
	})
	t.Run("plugin activation", func(t *testing.T) {
		link := find(t, admin.do(t, "GET", "/wp-admin/plugins.php", nil).body, `href="(plugins\.php\?action=activate&amp;plugin=akismet[^"]+)"`, "activate link")
		p := admin.do(t, "GET", "/wp-admin/"+strings.ReplaceAll(link, "&amp;", "&"), nil)
		if p.status != http.StatusFound {
			t.Errorf("activate: status %d, want 302; body %.300s", p.status, p.body)
		}
		if !strings.Contains(admin.do(t, "GET", "/wp-admin/plugins.php", nil).body, "plugins.php?action=deactivate&amp;plugin=akismet") {
			t.Error("akismet is not active after activation")
		}
	})
	anon := newBrowser("anon", guarded.URL)
	t.Run("a visitor comments and searches with quotes and apostrophes", func(t *testing.T) {
		p := anon.do(t, "POST", "/wp-comments-post.php", url.Values{
			"comment":         {"It's great, isn't it? I'd say \"really\" great -- can't wait for O'Reilly's take; 5 > 3 & 2 < 4."},
			"author":          {"Seán O'Brien"},
			"email":           {"sean@example.com"},
			"url":             {"https://example.com/~sean/?ref=blog&x=1"},
			"comment_post_ID": {fmt.Sprint(ids["post_d"])},
			"comment_parent":  {"0"},
		})
		if p.status != http.StatusFound {
			t.Errorf("comment: status %d, want 302; body %.300s", p.status, p.body)
		}
		for _, q := range []string{`it's "quoted"`, `O'Reilly's "SQL" book`, "rock 'n' roll"} {
			wantOK(t, "search "+q, anon.do(t, "GET", "/?s="+url.QueryEscape(q), nil))
		}
	})
	t.Run("attacks on the site are blocked", func(t *testing.T) {
		for _, a := range []struct{ name, method, path string }{
			{"xss in search", "GET", "/?s=" + url.QueryEscape("<script>alert(document.cookie)</script>")},
			{"sqli in a query", "GET", "/?p=" + url.QueryEscape("1 UNION SELECT user_pass FROM wp_users--")},
			{"traversal", "GET", "/?page=" + url.QueryEscape("../../../../wp-config.php")},
			{"sqli in the login name", "POST", "/wp-login.php"},
		} {
			var p page
			if a.method == "POST" {
				p = anon.do(t, "POST", a.path, url.Values{"log": {"admin' OR '1'='1' -- "}, "pwd": {"x"}})
			} else {
				p = anon.do(t, a.method, a.path, nil)
			}
			if p.status != http.StatusForbidden {
				t.Errorf("%s: status %d, want 403", a.name, p.status)
			}
		}
		p := rest(anon, "POST", fmt.Sprintf("/wp-json/wp/v2/comments?post=%d", postID), []byte(`{"content":"<script>alert(1)</script>"}`), "application/json")
		if p.status != http.StatusForbidden {
			t.Errorf("xss in a REST comment: status %d, want 403", p.status)
		}
	})
	t.Run("without the exclusions the editor's save is blocked", func(t *testing.T) {
		other := admin.on(plain.URL)
		p := rest(other, "POST", fmt.Sprintf("/wp-json/wp/v2/posts/%d", postID), save, "application/json", "X-HTTP-Method-Override: PUT")
		if p.status != http.StatusForbidden {
			t.Errorf("REST save without exclusions: status %d, want 403", p.status)
		}
	})
	if t.Failed() {
		t.Logf("ramjet output:\n%s", guarded.Output())
	}
}

// startWAFNode runs n in front of origin with the WAF in block mode and
// the given exclusions.
func startWAFNode(t *testing.T, n *node, origin, exclusions string) {
	t.Helper()
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`origin:
  servers: [%q]
defaults:
  debug_headers: true
  waf:
    mode: block
    paranoia: 1
    exclusions: %s
hosts:
  - names: [%q]
`, origin, exclusions, siteHost))
	n.Start(t, "--config", cfg)
}

// loginAs logs b in through wp-login.php.
func loginAs(t *testing.T, b *browser, user, pass string) {
	t.Helper()
	b.cookies["wordpress_test_cookie"] = "WP%20Cookie%20check"
	b.get(t, "/wp-login.php")
	p := b.do(t, http.MethodPost, "/wp-login.php", url.Values{
		"log": {user}, "pwd": {pass}, "testcookie": {"1"}, "redirect_to": {"http://wp.test/wp-admin/"}, "rememberme": {"forever"},
	})
	if p.status != http.StatusFound {
		t.Fatalf("login: status %d, want 302; body:\n%.1500s", p.status, p.body)
	}
}

// send is do with a raw body and extra "Name: value" header fields.
func (b *browser) send(t *testing.T, method, path string, body io.Reader, hdr ...string) page {
	t.Helper()
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = siteHost
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	var cookies []string
	for k, v := range b.cookies {
		cookies = append(cookies, k+"="+v)
	}
	req.Header.Set("Cookie", strings.Join(cookies, "; "))
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s %s: %v", b.name, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{status: resp.StatusCode, cacheStatus: resp.Header.Get("Cache-Status"), body: string(data), header: resp.Header}
}

func wantOK(t *testing.T, what string, p page) {
	t.Helper()
	if p.status < 200 || p.status > 299 {
		t.Errorf("%s: status %d, want 2xx; body %.500s", what, p.status, p.body)
	}
}

// find returns the first group of re in body.
func find(t *testing.T, body, re, what string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in the page (%s)", what, re)
	}
	return m[1]
}

// fileUpload is a multipart body with data as the file name under field,
// and the given form fields.
func fileUpload(t *testing.T, field, name string, data []byte, fields map[string]string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, err := w.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = w.Close()
	return w.FormDataContentType(), b.Bytes()
}

// pngUpload is a multipart body with a 64×64 PNG of noise under field
// (binary bytes, as a photo has) and the given form fields.
func pngUpload(t *testing.T, field, name string, fields map[string]string) (string, []byte) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	img.Set(0, 0, color.NRGBA{A: 255})
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, err := w.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(fw, img); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	return w.FormDataContentType(), b.Bytes()
}
