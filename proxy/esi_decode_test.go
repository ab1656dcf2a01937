package proxy

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// codedOrigin serves ESI pages and fragments in the content coding their
// path's "enc" query asks for (whatever the request accepted, as an origin
// that compresses anyway), and records the Accept-Encoding of each path.
type codedOrigin struct {
	*testOrigin
	mu     sync.Mutex
	accept map[string][]string // path -> Accept-Encoding values seen
}

func newCodedOrigin(t *testing.T) *codedOrigin {
	co := &codedOrigin{accept: map[string][]string{}}
	co.testOrigin = newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		co.mu.Lock()
		co.accept[r.URL.Path] = append(co.accept[r.URL.Path], r.Header.Get("Accept-Encoding"))
		co.mu.Unlock()
		q := r.URL.Query()
		var body string
		switch r.URL.Path {
		case "/page", "/nocache":
			body = "<h1>page</h1>" + q.Get("m") + "<p>end</p>"
			cc := "public,max-age=300,esi=on"
			if r.URL.Path == "/nocache" {
				cc = "no-cache,esi=on"
			}
			w.Header().Set("X-LiteSpeed-Cache-Control", cc)
		case "/frag":
			body = "[frag " + q.Get("name") + "]" + q.Get("m")
			w.Header().Set("Cache-Control", "public, max-age=300")
		case "/plain":
			body = strings.Repeat("<p>plain page</p>", 50)
			w.Header().Set("Cache-Control", "public, max-age=300")
			w.Header().Set("ETag", `"p1"`)
		case "/bomb":
			body = strings.Repeat("a", 4<<20)
			w.Header().Set("Cache-Control", "public, max-age=300")
			if q.Get("esi") != "" {
				w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			}
		}
		w.Header().Set("Content-Type", "text/html")
		switch enc := q.Get("enc"); enc {
		case "":
		case "zstd": // announced only: ramjet must not try
			w.Header().Set("Content-Encoding", enc)
		case "gzip-corrupt":
			w.Header().Set("Content-Encoding", "gzip")
			body = "\x1f\x8b\x08\x00 not gzip"
		default:
			w.Header().Set("Content-Encoding", enc)
			body = string(encodeAs(t, []byte(body), enc))
		}
		io.WriteString(w, body)
	})
	return co
}

func (co *codedOrigin) accepted(path string) []string {
	co.mu.Lock()
	defer co.mu.Unlock()
	return append([]string(nil), co.accept[path]...)
}

func esiProxy(t *testing.T, originURL string, adjust ...func(*Config)) string {
	cfg := testConfig(originURL)
	cfg.Default.ESI = true
	cfg.Compress.MinSize = 10
	for _, a := range adjust {
		a(&cfg)
	}
	_, base := startProxy(t, cfg)
	return base
}

// gunzipped is r's body with its gzip coding undone.
func gunzipped(t *testing.T, r reply) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestESICompressedPageAndFragmentsAreDecodedAtEveryLevel(t *testing.T) {
	co := newCodedOrigin(t)
	base := esiProxy(t, co.URL)
	// page gzip → fragment br → fragment "gzip, br" → identity fragment.
	leaf := `<esi:include src="/frag?name=leaf"/>`
	mid := `<esi:include src="/frag?name=mid&amp;enc=gzip,%20br&amp;m=` + urlQuery(leaf) + `"/>`
	top := `<esi:include src="/frag?name=top&amp;enc=br&amp;m=` + urlQuery(mid) + `"/>`
	u := base + "/page?enc=gzip&m=" + urlQuery(top)
	want := "<h1>page</h1>[frag top][frag mid][frag leaf]<p>end</p>"
	for _, step := range []string{"miss", "hit"} {
		r := get(t, u)
		if r.status != http.StatusOK || r.body != want {
			t.Fatalf("%s, identity client: %d %.200q, want %q", step, r.status, r.body, want)
		}
		if ce := r.header.Get("Content-Encoding"); ce != "" {
			t.Fatalf("%s: Content-Encoding %q for a client that accepts none", step, ce)
		}
		z := get(t, u, "Accept-Encoding", "gzip")
		if z.header.Get("Content-Encoding") != "gzip" || gunzipped(t, z) != want {
			t.Fatalf("%s, gzip client: Content-Encoding %q", step, z.header.Get("Content-Encoding"))
		}
		b := get(t, u, "Accept-Encoding", "br")
		if ce := b.header.Get("Content-Encoding"); ce != "" || b.body != want {
			t.Fatalf("%s, br client: Content-Encoding %q body %.200q (assembled pages are gzipped or identity)", step, ce, b.body)
		}
	}
}

func TestESIUncachedCompressedPageIsDecodedAndAssembled(t *testing.T) {
	co := newCodedOrigin(t)
	base := esiProxy(t, co.URL)
	u := base + "/nocache?enc=gzip&m=" + urlQuery(`<esi:include src="/frag?name=a&amp;enc=gzip"/>`)
	want := "<h1>page</h1>[frag a]<p>end</p>"
	if r := get(t, u); r.body != want || r.header.Get("Content-Encoding") != "" {
		t.Fatalf("identity client: %q %.200q, want %q", r.header.Get("Content-Encoding"), r.body, want)
	}
	// A logged-in user's request is passed with its Accept-Encoding.
	r := get(t, u, "Accept-Encoding", "gzip, deflate, br, zstd", "Cookie", "wordpress_logged_in_x=1")
	if r.header.Get("Content-Encoding") != "gzip" || gunzipped(t, r) != want {
		t.Fatalf("logged-in gzip client: %q", r.header.Get("Content-Encoding"))
	}
	seen := co.accepted("/nocache")
	if got := seen[len(seen)-1]; got != "gzip, br" {
		t.Errorf("a pass asked the origin for %q, want only the codings ramjet can undo (gzip, br)", got)
	}
	for _, ae := range co.accepted("/frag") {
		if ae != "" {
			t.Errorf("a fragment fetch sent Accept-Encoding %q, want none (identity)", ae)
		}
	}
}

func TestESIPageRamjetCannotDecode(t *testing.T) {
	co := newCodedOrigin(t)
	base := esiProxy(t, co.URL, func(c *Config) { c.MaxObjectSize = 1 << 20 })
	tests := []struct {
		name, path, accept string
		status             int
		coding             string
	}{
		{"unknown coding, client cannot read it: 502", "/page?enc=zstd", "gzip", http.StatusBadGateway, ""},
		{"unknown coding, client reads it: as it came", "/page?enc=zstd&c=2", "zstd", http.StatusOK, "zstd"},
		{"corrupt gzip, client cannot read it: 502", "/page?enc=gzip-corrupt", "", http.StatusBadGateway, ""},
		{"bomb, client cannot read it: 502", "/bomb?enc=gzip&esi=1", "", http.StatusBadGateway, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.accept != "" {
				hdr = []string{"Accept-Encoding", tt.accept}
			}
			for range 2 {
				r := get(t, base+tt.path, hdr...)
				if r.status != tt.status || r.header.Get("Content-Encoding") != tt.coding {
					t.Fatalf("%d Content-Encoding %q, want %d %q", r.status, r.header.Get("Content-Encoding"), tt.status, tt.coding)
				}
				if strings.Contains(r.cacheStatus, "hit") {
					t.Fatalf("Cache-Status %q: an undecodable page was stored", r.cacheStatus)
				}
			}
		})
	}
}

func TestESIFragmentRamjetCannotDecodeFailsToItsAlt(t *testing.T) {
	co := newCodedOrigin(t)
	base := esiProxy(t, co.URL, func(c *Config) { c.MaxObjectSize = 1 << 20 })
	m := `<esi:include src="/frag?name=z&amp;enc=zstd" alt="/frag?name=alt1"/>` +
		`<esi:include src="/bomb?enc=gzip" alt="/frag?name=alt2"/>` +
		`<esi:include src="/bomb?enc=br"/>`
	want := "<h1>page</h1>[frag alt1][frag alt2]<p>end</p>"
	for _, step := range []string{"miss", "hit"} {
		if r := get(t, base+"/page?m="+urlQuery(m)); r.status != http.StatusOK || r.body != want {
			t.Fatalf("%s: %d %.200q, want %q", step, r.status, r.body, want)
		}
	}
}

func TestPageFromACompressingOriginIsStoredDecoded(t *testing.T) {
	co := newCodedOrigin(t)
	base := esiProxy(t, co.URL)
	want := strings.Repeat("<p>plain page</p>", 50)
	for _, enc := range []string{"gzip", "br"} {
		u := base + "/plain?enc=" + enc
		get(t, u)
		if r := get(t, u); r.cacheStatus != "ramjet; hit" || r.body != want || r.header.Get("Content-Encoding") != "" {
			t.Fatalf("%s origin, identity client: %q Content-Encoding %q", enc, r.cacheStatus, r.header.Get("Content-Encoding"))
		} else if etag := r.header.Get("ETag"); etag != `W/"p1"` {
			t.Fatalf("%s origin: ETag %s on the decoded body, want the origin's made weak", enc, etag)
		}
		if r := get(t, u, "Accept-Encoding", "gzip"); r.header.Get("Content-Encoding") != "gzip" || gunzipped(t, r) != want {
			t.Fatalf("%s origin, gzip client: Content-Encoding %q", enc, r.header.Get("Content-Encoding"))
		}
		// The stored page is a fragment like any other.
		if r := get(t, base+"/page?m="+urlQuery(`<esi:include src="/plain?enc=`+enc+`"/>`)); r.body != "<h1>page</h1>"+want+"<p>end</p>" {
			t.Fatalf("%s page included: %.200q", enc, r.body)
		}
	}
}

func urlQuery(s string) string { return url.QueryEscape(s) }
