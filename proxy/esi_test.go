package proxy

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// esiOrigin serves a page with a public and a private fragment; each
// fragment prints a serial number so a cached copy can be told apart.
func esiOrigin(t *testing.T) (*testOrigin, *atomic.Int64) {
	var publicFetches atomic.Int64
	var serial atomic.Int64
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		user := ""
		if c, err := r.Cookie("user"); err == nil {
			user = c.Value
		}
		switch r.URL.Path {
		case "/page":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			io.WriteString(w, `<h1>page</h1><esi:include src="/pub" /><p>mid</p>`+
				`<esi:include src='/priv?a=1&#038;b=2' cache-control='private,no-vary' /><esi:remove>gone</esi:remove><p>end</p>`)
		case "/pub":
			publicFetches.Add(1)
			w.Header().Set("Cache-Control", "public, max-age=300")
			w.Header().Set("X-LiteSpeed-Tag", "frag-pub")
			fmt.Fprintf(w, "[pub %d]", serial.Add(1))
		case "/priv":
			w.Header().Set("X-LiteSpeed-Cache-Control", "private,max-age=300")
			fmt.Fprintf(w, "[hello %s %s]", user, r.URL.RawQuery)
		}
	})
	return o, &publicFetches
}

func TestESIAssemblesPublicAndPrivateFragments(t *testing.T) {
	o, pubFetches := esiOrigin(t)
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	_, base := startProxy(t, cfg)
	alice := get(t, base+"/page", "Cookie", "user=alice")
	bob := get(t, base+"/page", "Cookie", "user=bob")
	alice2 := get(t, base+"/page", "Cookie", "user=alice")
	if !strings.Contains(alice.body, "[hello alice a=1&b=2]") || !strings.Contains(bob.body, "[hello bob a=1&b=2]") {
		t.Fatalf("private blocks wrong:\n%s\n%s", alice.body, bob.body)
	}
	if strings.Contains(bob.body, "alice") || strings.Contains(alice2.body, "bob") {
		t.Fatal("one user's private block reached another")
	}
	if strings.Contains(alice.body, "esi:") || strings.Contains(alice.body, "gone") {
		t.Fatalf("markup left in the page: %s", alice.body)
	}
	if pubFetches.Load() != 1 {
		t.Fatalf("public fragment fetched %d times, want once", pubFetches.Load())
	}
	if alice2.cacheStatus != "ramjet; hit" || !strings.HasPrefix(alice2.body, "<h1>page</h1>[pub 1]<p>mid</p>") {
		t.Fatalf("page hit: %q %s", alice2.cacheStatus, alice2.body)
	}
}

func TestESIFragmentTagPurgeRefreshesFragmentNotPage(t *testing.T) {
	o, pubFetches := esiOrigin(t)
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	p, base := startProxy(t, cfg)
	first := get(t, base+"/page")
	p.Purge(purgeTag("frag-pub"))
	second := get(t, base+"/page")
	if second.cacheStatus != "ramjet; hit" || pubFetches.Load() != 2 || first.body == second.body {
		t.Fatalf("after fragment purge: %q, %d fetches\n%s\n%s", second.cacheStatus, pubFetches.Load(), first.body, second.body)
	}
}

// TestESIInlineServesOnlyItsOwnPagesIncludes: an inline body answers the
// includes of its name in the page that carries it; another page's include
// of the name, and the URL itself, come from the origin (issue 37).
func TestESIInlineServesOnlyItsOwnPagesIncludes(t *testing.T) {
	var blkFetches atomic.Int64
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			io.WriteString(w, `A<esi:inline name="/blk" cache-control="public,max-age=60">[block]</esi:inline>|<esi:include src="/blk"/>A`)
		case "/b":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			io.WriteString(w, `B<esi:include src="/blk"/>B`)
		case "/blk":
			blkFetches.Add(1)
			w.Header().Set("Cache-Control", "public, max-age=300")
			io.WriteString(w, "[from origin]")
		}
	})
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	_, base := startProxy(t, cfg)
	for i := range 2 {
		if a := get(t, base+"/a"); a.body != "A[block]|[block]A" || blkFetches.Load() != 0 {
			t.Fatalf("page with inline, request %d: %q, origin fetched /blk %d times", i+1, a.body, blkFetches.Load())
		}
	}
	if b := get(t, base+"/b"); b.body != "B[from origin]B" || blkFetches.Load() != 1 {
		t.Fatalf("another page's include of the inline name: %q, origin fetched /blk %d times", b.body, blkFetches.Load())
	}
	if blk := get(t, base+"/blk"); blk.body != "[from origin]" {
		t.Fatalf("the inline's name as a page: %q", blk.body)
	}
}

// TestESIInlineNeverReplacesAPage: a page that reflects a query parameter
// into an <esi:inline> named after another URL of the site stores nothing
// there: a fresh entry stays, a missing one is fetched from the origin.
func TestESIInlineNeverReplacesAPage(t *testing.T) {
	var serial atomic.Int64
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			io.WriteString(w, "results for "+r.URL.Query().Get("q"))
		default:
			w.Header().Set("Cache-Control", "public, max-age=300")
			fmt.Fprintf(w, "real %s %d", r.URL.Path, serial.Add(1))
		}
	})
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	_, base := startProxy(t, cfg)
	fresh := get(t, base+"/profile")
	for _, name := range []string{"/profile", "/missing"} {
		attack := `<esi:inline name="` + name + `" cache-control="public,max-age=31536000">EVIL</esi:inline>`
		get(t, base+"/search?q="+url.QueryEscape(attack))
	}
	if r := get(t, base+"/profile"); r.body != fresh.body || r.cacheStatus != "ramjet; hit" {
		t.Fatalf("fresh page after the attack: %q (%s), want the stored %q", r.body, r.cacheStatus, fresh.body)
	}
	if r := get(t, base+"/missing"); !strings.HasPrefix(r.body, "real /missing ") {
		t.Fatalf("missing page after the attack: %q, want the origin's", r.body)
	}
}

func TestESIAssembledPageIsGzippedForClientsThatAcceptIt(t *testing.T) {
	o, _ := esiOrigin(t)
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	cfg.Compress.MinSize = 10
	_, base := startProxy(t, cfg)
	get(t, base+"/page")
	r := get(t, base+"/page", "Accept-Encoding", "gzip", "Cookie", "user=carol")
	if r.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip on an assembled page: %v", r.header)
	}
	zr, err := gzip.NewReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !strings.Contains(string(plain), "[hello carol") {
		t.Fatalf("gunzipped page: %q %v", plain, err)
	}
}

func TestESIDebugHeaderListsFragments(t *testing.T) {
	o, _ := esiOrigin(t)
	cfg := testConfig(o.URL)
	cfg.Default.ESI, cfg.Default.DebugHeaders = true, true
	_, base := startProxy(t, cfg)
	first := get(t, base+"/page", "Cookie", "user=dave")
	second := get(t, base+"/page", "Cookie", "user=dave")
	if got := first.header.Get("X-Ramjet-Esi"); !strings.Contains(got, "/pub miss") {
		t.Fatalf("first debug header %q", got)
	}
	if got := second.header.Get("X-Ramjet-Esi"); !strings.Contains(got, "/pub hit") || !strings.Contains(got, "hit") {
		t.Fatalf("second debug header %q", got)
	}
}
