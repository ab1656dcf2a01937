package main_test

// End-to-end tests of ESI from origins that compress (issue 14, section
// 6), through the built binary: against the tests' own small origin
// (codingOrigin), which sends exactly the Content-Encoding a test asks
// for whatever the request accepted, and against the real nginx + php-fpm
// origin with nginx's gzip on, PHP's zlib.output_compression, scripts
// that gzip their own output and gzip_static always.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// codingOrigin is the tests' own origin. Its paths:
//
//	/page?m=MARKUP   an ESI page (esi=on, public, 300 s; cc=nocache: no-cache,esi=on)
//	/frag?name=N&m=M a public fragment "[frag N]" then M
//	/plain           a page without markup
//	/bomb?mib=N      N MiB of zeros (esi=1: as an ESI page)
//
// each in the coding its enc parameter names: identity, gzip, x-gzip, br,
// a list ("gzip, br": gzip applied first), zstd (announced only: nobody
// here can make it) or gzip-corrupt (announced gzip, garbage bytes).
type codingOrigin struct {
	URL  string
	mu   sync.Mutex
	seen map[string][]string // path -> Accept-Encoding of each request
}

// padding makes pages long enough for ramjet to compress (compress.min_size).
var padding = strings.Repeat("<p>the quick brown fox jumps over the lazy dog</p>\n", 40)

func startCodingOrigin(t *testing.T) *codingOrigin {
	t.Helper()
	co := &codingOrigin{seen: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(co.serve))
	t.Cleanup(srv.Close)
	co.URL = srv.URL
	return co
}

func (co *codingOrigin) serve(w http.ResponseWriter, r *http.Request) {
	co.mu.Lock()
	co.seen[r.URL.Path] = append(co.seen[r.URL.Path], r.Header.Get("Accept-Encoding"))
	co.mu.Unlock()
	q := r.URL.Query()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	var body []byte
	switch r.URL.Path {
	case "/page":
		h.Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
		if q.Get("cc") == "nocache" {
			h.Set("X-LiteSpeed-Cache-Control", "no-cache,esi=on")
		}
		body = []byte("<h1>page</h1>" + q.Get("m") + "<p>end</p>\n" + padding)
	case "/frag":
		h.Set("Cache-Control", "public, max-age=300")
		body = []byte("[frag " + q.Get("name") + "]" + q.Get("m"))
	case "/plain":
		h.Set("Cache-Control", "public, max-age=300")
		body = []byte(padding)
	case "/bomb":
		h.Set("Cache-Control", "public, max-age=300")
		if q.Get("esi") != "" {
			h.Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
		}
		var mib int
		fmt.Sscan(q.Get("mib"), &mib)
		writeCoded(w, bomb(q.Get("enc"), mib), q.Get("enc"))
		return
	default:
		http.NotFound(w, r)
		return
	}
	writeCoded(w, code(body, q.Get("enc")), q.Get("enc"))
}

// code applies enc (a Content-Encoding value) to body.
func code(body []byte, enc string) []byte {
	switch enc {
	case "zstd": // announced only
		return body
	case "gzip-corrupt":
		return []byte("\x1f\x8b\x08\x00 this is not gzip")
	}
	for _, c := range strings.Split(enc, ",") {
		switch strings.TrimSpace(c) {
		case "gzip", "x-gzip":
			body = fasthttp.AppendGzipBytes(nil, body)
		case "br":
			body = fasthttp.AppendBrotliBytes(nil, body)
		}
	}
	return body
}

func writeCoded(w http.ResponseWriter, body []byte, enc string) {
	switch enc {
	case "", "identity":
	case "gzip-corrupt":
		w.Header().Set("Content-Encoding", "gzip")
	default:
		w.Header().Set("Content-Encoding", enc)
	}
	w.Write(body)
}

var bombs sync.Map // "enc/mib" -> []byte

// bomb is mib MiB of zeros in enc (gzip or br): about a thousandth of
// that on the wire.
func bomb(enc string, mib int) []byte {
	key := fmt.Sprint(enc, "/", mib)
	if b, ok := bombs.Load(key); ok {
		return b.([]byte)
	}
	zeros := make([]byte, 1<<20)
	var buf bytes.Buffer
	switch enc {
	case "br":
		buf.Write(fasthttp.AppendBrotliBytes(nil, make([]byte, mib<<20)))
	default:
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		for range mib {
			zw.Write(zeros)
		}
		zw.Close()
	}
	bombs.Store(key, buf.Bytes())
	return buf.Bytes()
}

// setupCoding starts a codingOrigin and a ramjet in front of it (with
// args), and returns a fresh client.
func setupCoding(t *testing.T, args ...string) (*codingOrigin, *testbed.Ramjet, *http.Client) {
	t.Helper()
	co := startCodingOrigin(t)
	return co, startRamjet(t, co.URL, args...), newClient(t)
}

// acceptEncodings returns the Accept-Encoding values the origin saw for path.
func (co *codingOrigin) acceptEncodings(path string) []string {
	co.mu.Lock()
	defer co.mu.Unlock()
	return append([]string(nil), co.seen[path]...)
}

// fragSrc is the src of a /frag fragment named name in enc, whose body
// ends with markup m: its query HTML-escaped, as in a page.
func fragSrc(name, enc, m string) string {
	q := url.Values{"name": {name}}
	if enc != "" {
		q.Set("enc", enc)
	}
	if m != "" {
		q.Set("m", m)
	}
	return "/frag?" + strings.ReplaceAll(q.Encode(), "&", "&amp;")
}

// fragIncl is an <esi:include> of fragSrc(name, enc, m) with attrs.
func fragIncl(name, enc, m string, attrs ...string) string {
	return incl(fragSrc(name, enc, m), attrs...)
}

// codedPage is the URL of an ESI page in enc with markup m.
func codedPage(base, enc, m string, extra ...string) string {
	q := url.Values{"m": {m}}
	if enc != "" {
		q.Set("enc", enc)
	}
	u := base + "/page?" + q.Encode()
	for _, e := range extra {
		u += "&" + e
	}
	return u
}

// assembled is what a page of codingOrigin with these blocks reads as.
func assembled(blocks string) string { return "<h1>page</h1>" + blocks + "<p>end</p>\n" + padding }

// mustNoCoding fails if r carries a Content-Encoding.
func mustNoCoding(t testing.TB, r result, what string) {
	t.Helper()
	if ce := r.Header.Values("Content-Encoding"); len(ce) > 0 {
		t.Fatalf("%s: Content-Encoding %q for a client that accepts none", what, ce)
	}
}

// mustBody fails unless r is a 200 whose body, decoded, is want.
func mustBody(t testing.TB, r result, want, what string) {
	t.Helper()
	mustStatus(t, r, http.StatusOK, what)
	if got := string(decodeBody(t, r)); got != want {
		t.Fatalf("%s: body (Content-Encoding %q) %.300q, want %.300q", what, r.Header.Get("Content-Encoding"), got, want)
	}
}

// ---------------------------------------------------------------------------

// The first defect of the issue: a gzipped ESI page was spliced as raw
// gzip bytes and sent to a client that asked for identity with
// Content-Encoding: gzip.
func TestESIGzipPageIsDecodedBeforeAssemblyAndServedAsIdentity(t *testing.T) {
	t.Parallel()
	_, rj, c := setupCoding(t)
	for _, enc := range []string{"gzip", "x-gzip", "br", "gzip, br"} {
		t.Run(enc, func(t *testing.T) {
			u := codedPage(rj.URL, enc, fragIncl("a", "", ""))
			for i, hdr := range [][]string{nil, {"Accept-Encoding: identity"}} {
				what := fmt.Sprintf("request %d, Accept-Encoding %q", i+1, hdr)
				r := get(t, c, u, hdr...)
				if i == 0 {
					mustMissStored(t, r, what)
				} else {
					mustFreshHit(t, r, what)
				}
				mustNoCoding(t, r, what)
				mustBody(t, r, assembled("[frag a]"), what)
			}
		})
	}
}

func TestESICompressedFragmentsAreDecodedAtEveryNestingLevel(t *testing.T) {
	t.Parallel()
	_, rj, c := setupCoding(t)
	tests := []struct {
		name             string
		page, l1, l2, l3 string // codings of the page and of fragments at depth 1, 2, 3
	}{
		{"gzip page, br, gzip+br, identity", "gzip", "br", "gzip, br", ""},
		{"br page, gzip, x-gzip, br+gzip", "br", "gzip", "x-gzip", "br, gzip"},
		{"identity page, all fragments gzip", "", "gzip", "gzip", "gzip"},
		{"all br", "br", "br", "br", "br"},
		{"identity throughout", "", "", "", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := func(s string) string { return fmt.Sprintf("%s-%d", s, i) }
			l3 := fragIncl(n("l3"), tt.l3, "")
			l2 := fragIncl(n("l2"), tt.l2, l3)
			l1 := fragIncl(n("l1"), tt.l1, l2)
			u := codedPage(rj.URL, tt.page, "<b>"+l1+"</b>")
			want := assembled(fmt.Sprintf("<b>[frag %s][frag %s][frag %s]</b>", n("l1"), n("l2"), n("l3")))
			for _, step := range []string{"miss", "hit"} {
				r := get(t, c, u)
				mustNoCoding(t, r, step)
				mustBody(t, r, want, step)
				r = get(t, c, u, "Accept-Encoding: gzip")
				if r.Header.Get("Content-Encoding") != "gzip" {
					t.Fatalf("%s, gzip client: Content-Encoding %q, want ramjet's own gzip", step, r.Header.Get("Content-Encoding"))
				}
				mustBody(t, r, want, step+", gzip client")
			}
		})
	}
}

func TestESIClientGetsOnlyAnEncodingItAccepts(t *testing.T) {
	t.Parallel()
	_, rj, c := setupCoding(t)
	esiPage := codedPage(rj.URL, "gzip", fragIncl("a", "br", ""))
	tests := []struct {
		accept string
		esi    string // Content-Encoding of the assembled page (gzip is the only one ramjet compresses it in)
		plain  string // of a stored page without markup (ramjet keeps gzip and brotli copies)
	}{
		{"", "", ""},
		{"identity", "", ""},
		{"gzip", "gzip", "gzip"},
		{"br", "", "br"},
		{"gzip, br", "gzip", "br"},
		{"gzip;q=0", "", ""},
		{"br;q=1, gzip;q=0", "", "br"},
		{"zstd", "", ""},
		{"deflate", "", ""},
		{"*", "gzip", "br"},
	}
	for _, tt := range tests {
		t.Run("accept="+tt.accept, func(t *testing.T) {
			var hdr []string
			if tt.accept != "" {
				hdr = []string{"Accept-Encoding: " + tt.accept}
			}
			for _, step := range []string{"first", "second"} {
				r := get(t, c, esiPage, hdr...)
				if ce := r.Header.Get("Content-Encoding"); ce != tt.esi {
					t.Fatalf("ESI page, %s request: Content-Encoding %q, want %q", step, ce, tt.esi)
				}
				mustBody(t, r, assembled("[frag a]"), "ESI page")
				for _, enc := range []string{"gzip", "br"} {
					r = get(t, c, rj.URL+"/plain?enc="+enc, hdr...)
					if ce := r.Header.Get("Content-Encoding"); ce != tt.plain {
						t.Fatalf("page the origin sent in %s, %s request: Content-Encoding %q, want %q", enc, step, ce, tt.plain)
					}
					mustBody(t, r, padding, "plain page")
				}
			}
		})
	}
}

func TestESIDecompressionBombIsBoundedByMaxObjectSize(t *testing.T) {
	t.Parallel()
	_, rj, c := setupCoding(t, "--config", testbed.WriteConfig(t, "", "cache:\n  max_object_size: 1MiB\n"))
	const mib = 256 // decoded; ~250 KiB of gzip on the wire, under the limit
	// Compressing 256 MiB takes seconds under -race on a busy machine: do
	// it before the origin is asked, not within ramjet's origin timeout.
	bomb("gzip", mib)
	bomb("br", 64)
	rss := sampleRSS(rj.Pid())
	t.Run("page", func(t *testing.T) {
		u := rj.URL + "/bomb?esi=1&enc=gzip&mib=" + fmt.Sprint(mib)
		for range 2 {
			r := get(t, c, u)
			mustStatus(t, r, http.StatusBadGateway, "bomb page for a client without gzip")
		}
		r := get(t, c, u, "Accept-Encoding: gzip")
		mustStatus(t, r, http.StatusOK, "bomb page for a gzip client")
		if r.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(r.Body, bomb("gzip", mib)) {
			t.Fatalf("bomb page for a gzip client: Content-Encoding %q, %d bytes, want the origin's gzip as it came", r.Header.Get("Content-Encoding"), len(r.Body))
		}
		if cs := r.CacheStatus(); cs.Hit {
			t.Fatalf("Cache-Status %q: a bomb was stored", cs.Raw)
		}
	})
	t.Run("fragments", func(t *testing.T) {
		m := `<esi:include src="/bomb?enc=gzip&amp;mib=` + fmt.Sprint(mib) + `" alt="` + fragSrc("alt", "", "") + `"/>` +
			`<esi:include src="/bomb?enc=br&amp;mib=64"/>`
		for _, step := range []string{"miss", "hit"} {
			mustBody(t, get(t, c, codedPage(rj.URL, "gzip", m)), assembled("[frag alt]"), step)
		}
	})
	if peak := rss.Peak(); peak > 128<<20 {
		t.Errorf("ramjet's RSS peaked at %d MiB decoding %d MiB bombs under a 1 MiB max_object_size", peak>>20, mib)
	}
	if !rj.Alive() {
		t.Fatal("ramjet died")
	}
}

func TestESIPageRamjetCannotDecodeNeverReachesAClientThatCannotEither(t *testing.T) {
	t.Parallel()
	_, rj, c := setupCoding(t)
	m := fragIncl("a", "", "")
	tests := []struct {
		name, enc, accept string
		status            int
		coding            string
	}{
		{"zstd-to-gzip-client-is-502", "zstd", "gzip, br", http.StatusBadGateway, ""},
		{"zstd-to-zstd-client-as-it-came", "zstd", "zstd", http.StatusOK, "zstd"},
		{"corrupt-gzip-to-identity-client-is-502", "gzip-corrupt", "", http.StatusBadGateway, ""},
		{"corrupt-gzip-to-gzip-client-as-it-came", "gzip-corrupt", "gzip", http.StatusOK, "gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := codedPage(rj.URL, tt.enc, m, "case="+tt.name)
			var hdr []string
			if tt.accept != "" {
				hdr = []string{"Accept-Encoding: " + tt.accept}
			}
			for i := range 2 {
				r := get(t, c, u, hdr...)
				what := fmt.Sprintf("request %d", i+1)
				mustStatus(t, r, tt.status, what)
				if ce := r.Header.Get("Content-Encoding"); ce != tt.coding {
					t.Fatalf("%s: Content-Encoding %q, want %q", what, ce, tt.coding)
				}
				if cs := r.CacheStatus(); cs.Hit {
					t.Fatalf("%s: Cache-Status %q: a page ramjet cannot read was stored", what, cs.Raw)
				}
				if tt.status == http.StatusOK && !bytes.Equal(r.Body, code([]byte(assembled(m)), tt.enc)) {
					t.Fatalf("%s: body %.100q, want the origin's bytes as they came", what, r.Body)
				}
			}
		})
	}
}

func TestESIFragmentRamjetCannotDecodeFallsBackToAlt(t *testing.T) {
	t.Parallel()
	_, rj, c := setupCoding(t)
	m := fragIncl("z", "zstd", "", `alt="`+fragSrc("alt", "gzip", "")+`"`) +
		"|" + fragIncl("c", "gzip-corrupt", "") + "|" +
		fragIncl("ok", "br", "")
	for _, step := range []string{"miss", "hit"} {
		r := get(t, c, codedPage(rj.URL, "", m))
		mustNoCoding(t, r, step)
		mustBody(t, r, assembled("[frag alt]||[frag ok]"), step)
	}
}

func TestESIFetchesAskOnlyForCodingsRamjetDecodes(t *testing.T) {
	t.Parallel()
	co, rj, c := setupCoding(t)
	const chrome = "Accept-Encoding: gzip, deflate, br, zstd"
	m := fragIncl("a", "gzip", "")
	cached := codedPage(rj.URL, "gzip", m)
	mustBody(t, get(t, c, cached, chrome), assembled("[frag a]"), "cached page")
	// A logged-in user's uncached page is passed with the client's
	// Accept-Encoding, narrowed.
	passed := codedPage(rj.URL, "br", m, "cc=nocache")
	mustBody(t, get(t, c, passed, chrome, "Cookie: wordpress_logged_in_abc=admin"), assembled("[frag a]"), "logged-in page")
	seen := co.acceptEncodings("/page")
	if len(seen) != 2 || seen[0] != "" || seen[1] != "gzip, br" {
		t.Errorf("page requests asked for %q, want [\"\" (a fill: identity) \"gzip, br\" (a pass: what ramjet decodes of the client's)]", seen)
	}
	for _, ae := range co.acceptEncodings("/frag") {
		if ae != "" {
			t.Errorf("a fragment fetch asked for %q, want identity (no Accept-Encoding)", ae)
		}
	}
}

// ---------------------------------------------------------------------------
// The real origin: nginx + php-fpm.

// nginxGzip turns on nginx's gzip for the pages, as most hosts have it.
const nginxGzip = `	gzip on;
	gzip_types text/html;
	gzip_proxied any;
	gzip_min_length 20;
	gzip_vary on;
`

// A logged-in user's page is passed with the client's Accept-Encoding, so
// nginx's gzip (or PHP's zlib.output_compression) compresses it.
func TestESIPageCompressedByNginxOrPHPIsAssembledForLoggedInUsers(t *testing.T) {
	t.Parallel()
	o := startOriginWith(t, nginxGzip, "")
	rj := startRamjet(t, o.URL)
	c := newClient(t)
	markup := []string{incl("/esi/pub.php?name=a"), incl("/esi/priv.php?name=p", `cache-control="private,no-vary"`)}
	const loggedIn = "Cookie: wordpress_logged_in_abc=admin%7C1; user=alice"
	tests := []struct {
		name, accept string
		extra        []string
		wantCE       string
	}{
		{"nginx-gzip-to-gzip-client", "gzip, deflate, br, zstd", nil, "gzip"},
		{"nginx-gzip-to-gzip-only-client", "gzip", nil, "gzip"},
		{"php-zlib-output-compression", "gzip", []string{"zc=1"}, "gzip"},
		{"br-only-client-gets-identity", "br", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := rj.URL + esiPage("", markup, append([]string{"case=" + tt.name}, tt.extra...)...)
			r := get(t, c, u, loggedIn, "Accept-Encoding: "+tt.accept)
			if ce := r.Header.Get("Content-Encoding"); ce != tt.wantCE {
				t.Fatalf("Content-Encoding %q, want %q", ce, tt.wantCE)
			}
			r.Body = decodeBody(t, r)
			mustIntactPage(t, r, 2, tt.name)
			mustNoMarkup(t, r, tt.name)
			mustFrag(t, r, "a", tt.name)
			if p := mustFrag(t, r, "p", tt.name); p.User != "alice" {
				t.Fatalf("private block of %q, want alice", p.User)
			}
		})
	}
}

// Pages and fragments that compress whatever the request accepted: a
// script that gzips its own output, and nginx's gzip_static always.
func TestESIPageThatCompressesAnywayIsStoredDecoded(t *testing.T) {
	t.Parallel()
	gz := t.TempDir()
	writeGz(t, filepath.Join(gz, "page.html.gz"), "<p>static-start</p>"+
		`<esi:include src="/gzs/frag.html"/>`+incl("/esi/pub.php?name=php&enc=gzip")+"<p>static-end</p>\n"+padding)
	writeGz(t, filepath.Join(gz, "frag.html.gz"), "[static fragment]")
	o := startOriginWith(t, "", fmt.Sprintf(`		location /gzs/ {
			alias %s/;
			gzip_static always;
			add_header Cache-Control "max-age=300";
			add_header Surrogate-Control 'content="ESI/1.0"';
		}
`, gz))
	rj := startRamjet(t, o.URL)
	c := newClient(t)

	t.Run("php-gzips-page-and-fragments", func(t *testing.T) {
		u := rj.URL + esiPage("", []string{incl("/esi/pub.php?name=a&amp;enc=gzip"), incl("/esi/nest.php?d=1&amp;to=2&amp;enc=gzip")}, "enc=gzip")
		for i, what := range []string{"miss", "hit"} {
			r := get(t, c, u)
			mustNoCoding(t, r, what)
			if i == 0 {
				mustMissStored(t, r, what)
			} else {
				mustFreshHit(t, r, what)
			}
			mustIntactPage(t, r, 2, what)
			mustNoMarkup(t, r, what)
			for _, name := range []string{"a", "nest1", "nest2"} {
				mustFrag(t, r, name, what)
			}
		}
	})
	t.Run("nginx-gzip-static-always", func(t *testing.T) {
		for _, what := range []string{"miss", "hit"} {
			r := get(t, c, rj.URL+"/gzs/page.html")
			mustNoCoding(t, r, what)
			mustStatus(t, r, http.StatusOK, what)
			body := string(r.Body)
			if !strings.HasPrefix(body, "<p>static-start</p>[static fragment][frag name=php ") || !strings.Contains(body, "<p>static-end</p>") {
				t.Fatalf("%s: body %.200q, want the static page with both fragments decoded in place", what, body)
			}
			mustNoMarkup(t, r, what)
		}
	})
}

func writeGz(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, fasthttp.AppendGzipBytes(nil, []byte(body)), 0o644); err != nil {
		t.Fatal(err)
	}
}
