package main_test

// End-to-end tests of RFC 9111 freshness and revalidation through the
// built binary, against a small origin of the tests' own (freshOrigin)
// whose answers set exactly the headers under test. ramjet runs with its
// embedded defaults: no grace, no default TTL.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// freshAnswer is what freshOrigin answers for one path: headers, status,
// and whether it honours If-None-Match with a 304 (notModified headers
// then replace the full answer's).
type freshAnswer struct {
	status      int
	header      []string // "Name: value"
	etag        string
	notModified []string // headers of the 304
}

// freshOrigin serves the answers set per path and counts what it got:
// full answers (each with a new serial in the body) and 304s.
type freshOrigin struct {
	*httptest.Server
	mu      sync.Mutex
	answers map[string]freshAnswer
	full    map[string]int
	cond    map[string]int
	serial  atomic.Int64
}

func startFreshOrigin(t *testing.T) *freshOrigin {
	t.Helper()
	o := &freshOrigin{answers: map[string]freshAnswer{}, full: map[string]int{}, cond: map[string]int{}}
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

func (o *freshOrigin) set(path string, a freshAnswer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.answers[path] = a
}

func (o *freshOrigin) counts(path string) (full, conditional int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.full[path], o.cond[path]
}

func (o *freshOrigin) serve(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	a := o.answers[r.URL.Path]
	conditional := a.etag != "" && r.Header.Get("If-None-Match") == a.etag
	if conditional {
		o.cond[r.URL.Path]++
	} else {
		o.full[r.URL.Path]++
	}
	o.mu.Unlock()
	hdr := a.header
	if conditional {
		hdr = a.notModified
	}
	for _, h := range hdr {
		name, value, _ := strings.Cut(h, ":")
		w.Header().Add(name, strings.TrimSpace(value))
	}
	if a.etag != "" {
		w.Header().Set("ETag", a.etag)
	}
	if conditional {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(max(a.status, http.StatusOK))
	fmt.Fprintf(w, "serial %d", o.serial.Add(1))
}

// freshSetup starts a freshOrigin and a ramjet in front of it (cfg: YAML,
// "" for the embedded defaults).
func freshSetup(t *testing.T, cfg string) (*freshOrigin, *testbed.Ramjet, *http.Client) {
	t.Helper()
	o := startFreshOrigin(t)
	var args []string
	if cfg != "" {
		args = []string{"--config", testbed.WriteConfig(t, "", cfg)}
	}
	return o, startRamjet(t, o.URL, args...), newClient(t)
}

func TestStaleNotServedUnlessTheResponseAllowsIt(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/short", freshAnswer{header: []string{"Cache-Control: max-age=1"}})
	first := get(t, c, rj.URL+"/short")
	var after result
	if !testbed.Poll(ttlWait, func() bool {
		after = get(t, c, rj.URL+"/short")
		return string(after.Body) != string(first.Body)
	}) {
		t.Fatalf("still %q past max-age=1", first.Body)
	}
	if cs := after.Header.Get("Cache-Status"); strings.Contains(cs, "hit") {
		t.Fatalf("answer past max-age: Cache-Status %q, want a miss (no grace by default)", cs)
	}
	for range 3 {
		if cs := get(t, c, rj.URL+"/short").Header.Get("Cache-Status"); strings.Contains(cs, "fwd=stale") && strings.Contains(cs, "hit") {
			t.Fatalf("a stale copy was served: %q", cs)
		}
	}
}

func TestMustRevalidateEntryIsRevalidatedAfterASoftPurge(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/mr", freshAnswer{header: []string{"Cache-Control: max-age=300, must-revalidate"}, etag: `"v1"`,
		notModified: []string{"Cache-Control: max-age=300, must-revalidate"}})
	first := get(t, c, rj.URL+"/mr")
	mustStatus(t, do(t, c, "REFRESH", rj.URL+"/mr"), http.StatusOK, "REFRESH /mr")
	after := get(t, c, rj.URL+"/mr")
	full, cond := o.counts("/mr")
	if full != 1 || cond != 1 {
		t.Fatalf("origin got %d full and %d conditional requests, want 1 and 1 (revalidated, not served stale)", full, cond)
	}
	if string(after.Body) != string(first.Body) {
		t.Fatalf("after the 304: %q, want the stored %q", after.Body, first.Body)
	}
}

func TestMustRevalidateWithTheOriginDownIs504(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/mr", freshAnswer{header: []string{"Cache-Control: max-age=1, must-revalidate, stale-if-error=600"}, etag: `"v1"`})
	mustStatus(t, get(t, c, rj.URL+"/mr"), http.StatusOK, "first")
	o.Close()
	var r result
	if !testbed.Poll(ttlWait, func() bool {
		r = get(t, c, rj.URL+"/mr")
		return r.Status != http.StatusOK
	}) {
		t.Fatal("the must-revalidate page was still served 200 past max-age with the origin down")
	}
	mustStatus(t, r, http.StatusGatewayTimeout, "must-revalidate page past max-age, origin down")
}

func TestNoCacheResponseIsStoredAndRevalidatedOnEveryUse(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/nc", freshAnswer{header: []string{"Cache-Control: no-cache"}, etag: `"n1"`, notModified: []string{"Cache-Control: no-cache"}})
	first := get(t, c, rj.URL+"/nc")
	for i := range 3 {
		r := get(t, c, rj.URL+"/nc")
		if string(r.Body) != string(first.Body) {
			t.Fatalf("use %d: %q, want the stored %q", i+2, r.Body, first.Body)
		}
	}
	if full, cond := o.counts("/nc"); full != 1 || cond != 3 {
		t.Fatalf("origin got %d full and %d conditional requests, want 1 and 3", full, cond)
	}
}

func TestFreshErrorStatusesAreReused(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	for _, status := range []int{299, 400, 500, 503, 599} {
		path := fmt.Sprintf("/status%d", status)
		o.set(path, freshAnswer{status: status, header: []string{"Cache-Control: max-age=300"}})
		first, second := get(t, c, rj.URL+path), get(t, c, rj.URL+path)
		if second.Status != status || string(second.Body) != string(first.Body) {
			t.Fatalf("%d with max-age: second answer %d %q, want the stored %d %q", status, second.Status, second.Body, status, first.Body)
		}
	}
}

func TestExpiresThatIsNotAValidDateMeansExpired(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	later := time.Now().Add(time.Hour).UTC()
	tests := []struct {
		name, expires string
		reused        bool
	}{
		{"valid", later.Format(http.TimeFormat), true},
		{"lower-case gmt", strings.Replace(later.Format(http.TimeFormat), "GMT", "gmt", 1), true},
		{"extra spaces", later.Format("Mon,  02 Jan 2006 15:04:05 GMT"), false},
		// At an hour before 10 (tomorrow, 05:04:05): "3" of a later hour
		// like 12 or 23 would print two digits, a valid date.
		{"one-digit hour", time.Date(later.Year(), later.Month(), later.Day()+1, 5, 4, 5, 0, time.UTC).Format("Mon, 02 Jan 2006 3:04:05 GMT"), false},
		{"zero", "0", false},
	}
	for i, tt := range tests {
		path := fmt.Sprintf("/expires%d", i)
		o.set(path, freshAnswer{header: []string{"Expires: " + tt.expires}})
		first, second := get(t, c, rj.URL+path), get(t, c, rj.URL+path)
		if reused := string(first.Body) == string(second.Body); reused != tt.reused {
			t.Errorf("Expires %s (%q): reused=%v, want %v", tt.name, tt.expires, reused, tt.reused)
		}
	}
}

func TestHeuristicFreshnessIsAnOptIn(t *testing.T) {
	t.Parallel()
	lastModified := "Last-Modified: " + time.Now().Add(-100*time.Hour).UTC().Format(http.TimeFormat)
	for _, tt := range []struct {
		name, cfg string
		reused    bool
	}{
		{"off by default", "", false},
		{"on", "defaults:\n  heuristic_freshness: true\n", true},
	} {
		o, rj, c := freshSetup(t, tt.cfg)
		o.set("/lm", freshAnswer{header: []string{lastModified}})
		first, second := get(t, c, rj.URL+"/lm"), get(t, c, rj.URL+"/lm")
		if reused := string(first.Body) == string(second.Body); reused != tt.reused {
			t.Errorf("heuristic freshness %s: reused=%v, want %v", tt.name, reused, tt.reused)
		}
	}
}

func TestA304UpdatesTheStoredHeaders(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/upd", freshAnswer{header: []string{"Cache-Control: no-cache", "X-Version: 1"}, etag: `"u1"`,
		notModified: []string{"Cache-Control: max-age=300", "X-Version: 2"}})
	first := get(t, c, rj.URL+"/upd")
	second := get(t, c, rj.URL+"/upd") // revalidated: the 304 brings max-age and X-Version 2
	third := get(t, c, rj.URL+"/upd")  // fresh now: a hit
	for _, r := range []result{second, third} {
		if v := r.Header.Get("X-Version"); v != "2" || string(r.Body) != string(first.Body) {
			t.Fatalf("after the 304: X-Version %q body %q, want 2 and the stored %q", v, r.Body, first.Body)
		}
	}
	if cs := third.Header.Get("Cache-Status"); cs != "ramjet; hit" {
		t.Fatalf("after a 304 with max-age: Cache-Status %q, want a hit", cs)
	}
	if full, cond := o.counts("/upd"); full != 1 || cond != 1 {
		t.Fatalf("origin got %d full and %d conditional requests, want 1 and 1", full, cond)
	}
}

func TestIfModifiedSinceWithoutLastModifiedUsesTheStoredDate(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	date := time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat)
	o.set("/dated", freshAnswer{header: []string{"Cache-Control: max-age=300", "Date: " + date}})
	get(t, c, rj.URL+"/dated")
	if r := get(t, c, rj.URL+"/dated", "If-Modified-Since: "+date); r.Status != http.StatusNotModified {
		t.Fatalf("If-Modified-Since equal to the stored Date: %d, want 304", r.Status)
	}
	earlier := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	if r := get(t, c, rj.URL+"/dated", "If-Modified-Since: "+earlier); r.Status != http.StatusOK {
		t.Fatalf("If-Modified-Since before the stored Date: %d, want 200", r.Status)
	}
}

func TestHeadersNamedInConnectionAreNotStoredOrForwarded(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/hop", freshAnswer{header: []string{"Cache-Control: max-age=300", "Connection: X-Hop", "X-Hop: 1", "X-Kept: 1"}})
	o.set("/hop-relayed", freshAnswer{header: []string{"Cache-Control: no-store", "Connection: X-Hop", "X-Hop: 1", "X-Kept: 1"}})
	for _, what := range []string{"/hop", "/hop", "/hop-relayed"} {
		r := get(t, c, rj.URL+what)
		if r.Header.Get("X-Hop") != "" || r.Header.Get("X-Kept") != "1" {
			t.Fatalf("%s: X-Hop %q X-Kept %q, want the Connection-named field dropped, the other kept", what, r.Header.Get("X-Hop"), r.Header.Get("X-Kept"))
		}
	}
}

func TestAuthorizedRequestsShareOnlyResponsesThatAllowIt(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/pub", freshAnswer{header: []string{"Cache-Control: public, max-age=300"}})
	o.set("/own", freshAnswer{header: []string{"Cache-Control: max-age=300"}})
	for path, shared := range map[string]bool{"/pub": true, "/own": false} {
		a := get(t, c, rj.URL+path, "Authorization: Basic YTp4")
		b := get(t, c, rj.URL+path, "Authorization: Basic Yjp4")
		if reused := string(a.Body) == string(b.Body); reused != shared {
			t.Errorf("%s with Authorization: second user reused=%v, want %v", path, reused, shared)
		}
	}
}

// RFC 9213: a targeted field (ramjet's own, then CDN-Cache-Control)
// governs ramjet's caching before Cache-Control; ramjet's own is not sent
// on, CDN-Cache-Control is (it may address caches behind ramjet too).
func TestTargetedCacheControlGovernsRamjetsCaching(t *testing.T) {
	t.Parallel()
	o, rj, c := freshSetup(t, "")
	o.set("/own", freshAnswer{header: []string{"Ramjet-Cache-Control: max-age=300", "Cache-Control: no-store"}})
	o.set("/cdn", freshAnswer{header: []string{"CDN-Cache-Control: max-age=300", "Cache-Control: no-store"}})
	o.set("/cdn-private", freshAnswer{header: []string{"CDN-Cache-Control: private", "Cache-Control: max-age=300"}})
	o.set("/both", freshAnswer{header: []string{"Ramjet-Cache-Control: no-store", "CDN-Cache-Control: max-age=300"}})
	o.set("/huge", freshAnswer{header: []string{"CDN-Cache-Control: max-age=99999999999999"}})
	tests := []struct {
		path      string
		reused    bool
		forwarded string // a field the client must see; "" none
		hidden    string // a field the client must not see
	}{
		{"/own", true, "Cache-Control", "Ramjet-Cache-Control"},
		{"/cdn", true, "CDN-Cache-Control", ""},
		{"/cdn-private", false, "", ""},
		{"/both", false, "", "Ramjet-Cache-Control"},
		{"/huge", true, "", ""},
	}
	for _, tt := range tests {
		first, second := get(t, c, rj.URL+tt.path), get(t, c, rj.URL+tt.path)
		if reused := string(first.Body) == string(second.Body); reused != tt.reused {
			t.Errorf("%s: reused=%v, want %v (%s)", tt.path, reused, tt.reused, second.Header.Get("Cache-Status"))
		}
		for _, r := range []result{first, second} {
			if tt.forwarded != "" && r.Header.Get(tt.forwarded) == "" {
				t.Errorf("%s: %s not sent to the client", tt.path, tt.forwarded)
			}
			if tt.hidden != "" && r.Header.Get(tt.hidden) != "" {
				t.Errorf("%s: %s reached the client", tt.path, tt.hidden)
			}
		}
	}
}
