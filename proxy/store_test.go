package proxy

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// storing is the fill of path (asked with the request's reqLines, "Name:
// value") once its origin answered status with respLines and body,
// decided as fill.run decides: ready for store, storePrivate or
// storeRevalidated. No origin is asked.
func storing(t *testing.T, p *Proxy, clock *testClock, path string, stale *cache.Entry, reqLines []string, status int, respLines []string, body []byte) fill {
	t.Helper()
	f := testFill(t, p, path, stale)
	for _, l := range reqLines {
		k, v, _ := strings.Cut(l, ":")
		f.req.Header.Add(k, strings.TrimSpace(v))
	}
	f.resp = fasthttp.AcquireResponse()
	f.resp.SetStatusCode(status)
	for _, l := range respLines {
		k, v, _ := strings.Cut(l, ":")
		f.resp.Header.Add(k, strings.TrimSpace(v))
	}
	f.resp.SetBody(body)
	f.born, f.now = clock.Now(), clock.Now()
	in := policyInput(f.req, f.resp, f.s, f.now)
	f.d = policy.Decide(&in)
	return f
}

// storeProxy is a proxy whose origin is never asked: store is given the
// answers.
func storeProxy(t *testing.T, clock *testClock, adjust func(*Config)) *Proxy {
	t.Helper()
	cfg := testConfig(unreachable(t))
	if adjust != nil {
		adjust(&cfg)
	}
	return newTestProxy(t, cfg, clock.Now)
}

// Answers that vary on a request field are stored side by side, one per
// value, and each is found only by its own value.
func TestStoreKeepsVariantsApart(t *testing.T) {
	clock := newTestClock()
	p := storeProxy(t, clock, nil)
	langs := []string{"en", "de", "fr"}
	stored := map[string]*cache.Entry{}
	var f fill
	for _, lang := range langs {
		f = storing(t, p, clock, "/hello", nil, []string{"Accept-Language: " + lang}, 200,
			[]string{"Cache-Control: max-age=60", "Vary: Accept-Language"}, []byte("hello in "+lang))
		res := f.store()
		if !res.stored || res.entry == nil {
			t.Fatalf("%s: not stored: %q %v", lang, res.status, res.err)
		}
		stored[lang] = res.entry
	}
	o := f.s.cache.Lookup(f.h, []byte(f.key))
	if o == nil || !slices.Equal(o.Vary.Headers, []string{"accept-language"}) {
		t.Fatalf("object %+v, want one varying on accept-language", o)
	}
	for _, lang := range langs {
		var h fasthttp.RequestHeader
		h.Set("Accept-Language", lang)
		e := o.Variant(appendVariant(nil, &h, &o.Vary))
		if e != stored[lang] || string(e.Body) != "hello in "+lang {
			t.Errorf("variant for %s: %v, want the answer stored for it", lang, e)
		}
	}
	var other fasthttp.RequestHeader
	other.Set("Accept-Language", "nl")
	if e := o.Variant(appendVariant(nil, &other, &o.Vary)); e != nil {
		t.Errorf("a value never stored found %q", e.Body)
	}
}

// The stored body is the identity body: a coding ramjet can undo is
// undone (and a strong ETag, which named the coded bytes, made weak); one
// it cannot is stored as it came; a body over the size limit is relayed
// with what was read of it, and nothing is stored.
func TestStoreKeepsTheIdentityBodyWithinTheSizeLimit(t *testing.T) {
	page := bytes.Repeat([]byte("<p>a page of the site</p>\n"), 20) // 520 bytes: compressible
	gzipped := fasthttp.AppendGzipBytes(nil, page)
	tests := []struct {
		name     string
		coding   string
		body     []byte
		stored   []byte // the entry's body; nil: not stored
		etag     string
		status   string
		compress bool // gzip and brotli copies made for hits
	}{
		{name: "identity", body: page, stored: page, etag: `"e"`, status: string(csStored), compress: true},
		{name: "gzip undone", coding: "gzip", body: gzipped, stored: page, etag: `W/"e"`, status: string(csStored), compress: true},
		{name: "unknown coding as it came", coding: "x-squash", body: []byte("squashed"), stored: []byte("squashed"), etag: `"e"`, status: string(csStored)},
		{name: "over the size limit relayed", body: bytes.Repeat([]byte("x"), 2000), status: "ramjet; fwd=miss; detail=too-large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newTestClock()
			p := storeProxy(t, clock, func(c *Config) { c.MaxObjectSize = 1000 })
			lines := []string{"Cache-Control: max-age=60", "Content-Type: text/html", `ETag: "e"`}
			if tt.coding != "" {
				lines = append(lines, "Content-Encoding: "+tt.coding)
			}
			f := storing(t, p, clock, "/page", nil, nil, 200, lines, tt.body)
			res := f.store()
			if string(res.status) != tt.status {
				t.Errorf("Cache-Status %q, want %q", res.status, tt.status)
			}
			o := f.s.cache.Lookup(f.h, []byte(f.key))
			if tt.stored == nil {
				if o != nil && len(o.Variants) > 0 {
					t.Error("stored over the size limit")
				}
				if got := answerBody(t, res); got != string(tt.body) {
					t.Errorf("relayed %d bytes, want the %d the origin sent", len(got), len(tt.body))
				}
				return
			}
			e := res.entry
			if e == nil {
				t.Fatal("nothing stored")
			}
			if !bytes.Equal(e.Body, tt.stored) || string(e.ETag) != tt.etag {
				t.Fatalf("stored %.40q with ETag %s, want %.40q with ETag %s", e.Body, e.ETag, tt.stored, tt.etag)
			}
			if (e.Gzip != nil) != tt.compress {
				t.Errorf("gzip copy made: %v, want %v", e.Gzip != nil, tt.compress)
			}
			coding := ""
			for _, h := range e.Header {
				if strings.EqualFold(string(h.Name), "Content-Encoding") {
					coding = string(h.Value)
				}
			}
			if tt.coding == "x-squash" && coding != "x-squash" || tt.coding != "x-squash" && coding != "" {
				t.Errorf("stored Content-Encoding %q for a body stored %s", coding, tt.name)
			}
		})
	}
}

// What the stored copy keeps of the origin's answer: none of the fields
// its Connection header names, no Set-Cookie (which goes to the client
// whose request filled it only).
func TestStoreLeavesOutConnectionFieldsAndCookies(t *testing.T) {
	clock := newTestClock()
	p := storeProxy(t, clock, nil)
	f := storing(t, p, clock, "/c", nil, nil, 200, []string{"Cache-Control: public, max-age=60", "Connection: X-Hop",
		"X-Hop: secret", "X-Kept: yes", "Set-Cookie: visit=1"}, []byte("body"))
	f.s.CacheSetCookie = true // stored despite its cookie, as cache_set_cookie allows
	in := policyInput(f.req, f.resp, f.s, f.now)
	f.d = policy.Decide(&in)
	res := f.store()
	if !res.stored {
		t.Fatalf("not stored: %q", res.status)
	}
	names := map[string]string{}
	for _, h := range res.entry.Header {
		names[strings.ToLower(string(h.Name))] = string(h.Value)
	}
	if _, ok := names["x-hop"]; ok {
		t.Error("stored the field Connection names")
	}
	if _, ok := names["set-cookie"]; ok {
		t.Error("stored Set-Cookie")
	}
	if names["x-kept"] != "yes" {
		t.Errorf("X-Kept %q, want it stored", names["x-kept"])
	}
	if len(res.setCookies) != 1 || string(res.setCookies[0]) != "visit=1" {
		t.Errorf("cookies for the filling client %q, want visit=1", res.setCookies)
	}
}

// A private answer is kept for its user only: in the private cache under
// the user's identity, with its tags in the user's namespace, never in
// the shared cache.
func TestStorePrivateKeepsAnswersForTheirUserOnly(t *testing.T) {
	clock := newTestClock()
	p := storeProxy(t, clock, nil)
	f := storing(t, p, clock, "/account", nil, nil, 200,
		[]string{"X-LiteSpeed-Cache-Control: private, max-age=60", "X-LiteSpeed-Tag: cart"}, []byte("my cart"))
	f.id = 0x2a
	if !f.d.Private || f.d.TTL <= 0 {
		t.Fatalf("decision %+v, want private with a lifetime", f.d)
	}
	res := f.storePrivate()
	if string(res.status) != string(csStoredPrivate) {
		t.Fatalf("Cache-Status %q, want %q", res.status, csStoredPrivate)
	}
	if o := f.s.cache.Lookup(f.h, []byte(f.key)); o != nil && len(o.Variants) > 0 {
		t.Error("a private answer is in the shared cache")
	}
	pkey := appendPrivateKey(nil, f.id, []byte(f.key))
	o := p.private.Lookup(p.private.Hash(pkey), pkey)
	if o == nil || o.Variant([]byte(res.entry.Variant)) != res.entry {
		t.Fatal("the private answer is not in the private cache under its user")
	}
	if !slices.Contains(res.entry.Tags, privateTag(f.id, "cart")) || slices.Contains(res.entry.Tags, scopedTag(f.scope, "cart")) {
		t.Errorf("tags %q, want cart in the user's namespace only", res.entry.Tags)
	}
	if other := appendPrivateKey(nil, 0x2b, []byte(f.key)); p.private.Lookup(p.private.Hash(other), other) != nil {
		t.Error("another user finds the private answer")
	}
}

// A 304 refreshes the stale copy: its body kept, its fields updated from
// the 304, fresh again for the 304's lifetime.
func TestStoreRevalidatedKeepsTheBodyWithTheNewFields(t *testing.T) {
	clock := newTestClock()
	p := storeProxy(t, clock, nil)
	stale := staleCopy(clock.Now(), "old body", 0, false)
	stale.Header = []cache.Field{{Name: []byte("X-Version"), Value: []byte("1")}, {Name: []byte("X-Same"), Value: []byte("s")}}
	f := storing(t, p, clock, "/r", stale, nil, http.StatusNotModified, []string{"Cache-Control: max-age=60", "X-Version: 2", `ETag: "v1"`}, nil)
	res := f.storeRevalidated()
	if string(res.status) != string(csRevalidated) || !res.stored {
		t.Fatalf("Cache-Status %q stored %v, want %q", res.status, res.stored, csRevalidated)
	}
	e := res.entry
	if string(e.Body) != "old body" || e.Status != http.StatusOK {
		t.Errorf("refreshed copy %d %q, want the stale copy's 200 and body", e.Status, e.Body)
	}
	fields := map[string]string{}
	for _, h := range e.Header {
		fields[string(h.Name)] = string(h.Value)
	}
	if fields["X-Version"] != "2" || fields["X-Same"] != "s" {
		t.Errorf("fields %v, want X-Version from the 304 and X-Same kept", fields)
	}
	if got := f.s.cache.Status(e, clock.Now()); got != cache.Fresh {
		t.Errorf("refreshed copy is %v, want fresh", got)
	}
	clock.Advance(61 * time.Second)
	if got := f.s.cache.Status(e, clock.Now()); got == cache.Fresh {
		t.Error("refreshed copy outlives the 304's max-age")
	}
}
