package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// fillHost is the site every fill of these tests is for.
const fillHost = "site.test"

// testFill is the fill of path on p's site for fillHost, made as a
// warm-up's is (no request asked for it), revalidating stale when set.
func testFill(t *testing.T, p *Proxy, path string, stale *cache.Entry) fill {
	t.Helper()
	g := p.gen.Load()
	s := g.router.route([]byte(fillHost))
	req := fasthttp.AcquireRequest()
	t.Cleanup(func() { fasthttp.ReleaseRequest(req) })
	req.Header.SetHost(fillHost)
	req.SetRequestURI(path)
	key := "http://" + fillHost + path
	return newFill(p, g, s, req, key, s.cache.Hash([]byte(key)), stale, nil, false)
}

// staleCopy is a copy of body stored an hour before now, stale since a
// minute before now, with ETag "v1"; the origin's failure may be
// answered with it for errorFor after now (0: not at all).
func staleCopy(now int64, body string, errorFor time.Duration, mustRevalidate bool) *cache.Entry {
	e := &cache.Entry{Status: http.StatusOK, Body: []byte(body), ETag: []byte(`"v1"`),
		Stored: now - int64(time.Hour), FreshUntil: now - int64(time.Minute), MustRevalidate: mustRevalidate}
	e.StaleUntil, e.ErrorUntil = e.FreshUntil, e.FreshUntil
	if errorFor > 0 {
		e.ErrorUntil = now + int64(errorFor)
	}
	return e
}

// answerBody is the body a fill's result answers with: its entry's, or
// the relayed response's, prefix and rest of the stream (it releases it).
func answerBody(t *testing.T, res result) string {
	t.Helper()
	switch {
	case res.entry != nil:
		return string(res.entry.Body)
	case res.resp == nil:
		return ""
	}
	defer releaseResponse(res.resp)
	if !res.resp.IsBodyStream() {
		return string(res.resp.Body()) // whole: a prefix read was a copy (as relay takes it)
	}
	rest, err := io.ReadAll(res.resp.BodyStream())
	if err != nil {
		t.Fatalf("reading the relayed body: %v", err)
	}
	return string(res.prefix) + string(rest)
}

// unreachable is an origin URL nothing listens on.
func unreachable(t *testing.T) string {
	t.Helper()
	o := newTestOrigin(t, func(http.ResponseWriter, *http.Request) {})
	o.Close()
	return o.URL
}

// fillProxy is a proxy for origin (unreachable when nil) whose cache
// clock is clock.
func fillProxy(t *testing.T, origin http.HandlerFunc, clock *testClock) *Proxy {
	t.Helper()
	url := unreachable(t)
	if origin != nil {
		url = newTestOrigin(t, origin).URL
	}
	return newTestProxy(t, testConfig(url), clock.Now)
}

// answers is an origin that always answers status with cacheControl and
// body.
func answers(status int, cacheControl, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// A fill answers with what the origin said, stored when it may be, and
// falls back to the stale copy it revalidates only within the copy's
// stale-if-error window.
func TestFillAnswersFromTheOriginOrTheStaleCopy(t *testing.T) {
	revalidating := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "new")
	}
	type staleOf struct {
		errorFor       time.Duration
		mustRevalidate bool
	}
	tests := []struct {
		name   string
		origin http.HandlerFunc // nil: unreachable
		stale  *staleOf         // the copy revalidated; nil: a miss
		// status is the answer's Cache-Status, or its start when it ends
		// with "="; "" when the fill fails with err (nil: any error).
		status       string
		body         string
		stored       bool
		staleOnError bool
		err          error
	}{
		{name: "a cacheable miss is stored", origin: answers(200, "max-age=60", "fresh"),
			status: string(csStored), body: "fresh", stored: true},
		{name: "an uncacheable miss is relayed", origin: answers(200, "no-store", "mine"),
			status: "ramjet; fwd=miss; detail=no-store", body: "mine"},
		{name: "a 304 makes the stale copy fresh with its body", origin: revalidating, stale: &staleOf{},
			status: string(csRevalidated), body: "old", stored: true},
		{name: "a changed page replaces the stale copy", origin: answers(200, "max-age=60", "new"), stale: &staleOf{},
			status: "ramjet; fwd=stale; stored", body: "new", stored: true},
		{name: "an origin error status serves the stale copy within stale-if-error", origin: answers(503, "", "down"),
			stale: &staleOf{errorFor: time.Hour}, status: string(csStaleOnError), body: "old", staleOnError: true},
		{name: "an unreachable origin serves the stale copy within stale-if-error",
			stale: &staleOf{errorFor: time.Hour}, status: string(csStaleOnError), body: "old", staleOnError: true},
		{name: "past stale-if-error the origin's error status is relayed", origin: answers(503, "", "down"),
			stale: &staleOf{}, status: "ramjet; fwd=stale; detail=", body: "down"},
		{name: "an unreachable origin fails a must-revalidate copy", stale: &staleOf{errorFor: 0, mustRevalidate: true},
			err: ErrMustRevalidate},
		{name: "an unreachable origin fails a miss"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newTestClock()
			p := fillProxy(t, tt.origin, clock)
			var stale *cache.Entry
			if tt.stale != nil {
				stale = staleCopy(clock.Now(), "old", tt.stale.errorFor, tt.stale.mustRevalidate)
			}
			f := testFill(t, p, "/page", stale)
			res := f.run()
			if tt.status == "" {
				if res.err == nil || tt.err != nil && !errors.Is(res.err, tt.err) {
					t.Fatalf("fill: err %v, want %v", res.err, tt.err)
				}
				return
			}
			if res.err != nil {
				t.Fatalf("fill failed: %v", res.err)
			}
			status := string(res.status)
			if want, prefix := strings.CutSuffix(tt.status, "="); prefix && !strings.HasPrefix(status, tt.status) || !prefix && status != want {
				t.Errorf("Cache-Status %q, want %q", status, tt.status)
			}
			if res.stored != tt.stored || res.staleOnError != tt.staleOnError {
				t.Errorf("stored %v, stale on error %v; want %v, %v", res.stored, res.staleOnError, tt.stored, tt.staleOnError)
			}
			if tt.staleOnError && res.entry != stale {
				t.Error("the answer is not the stale copy itself")
			}
			if body := answerBody(t, res); body != tt.body {
				t.Errorf("answer %q, want %q", body, tt.body)
			}
			o := f.s.cache.Lookup(f.h, []byte(f.key))
			switch {
			case tt.stored && (o == nil || o.Variant([]byte(res.entry.Variant)) != res.entry):
				t.Error("the answer is not what the cache holds")
			case tt.stored && f.s.cache.Status(res.entry, clock.Now()) != cache.Fresh:
				t.Error("the stored answer is not fresh")
			case !tt.stored && o != nil && len(o.Variants) > 0:
				t.Error("something was stored")
			}
		})
	}
}

// An answer that is not stored marks its URL hit-for-miss, so that the
// next requests for it do not queue behind one another's fills, unless it
// says nothing of the URL: a server error (usually transient) is not
// remembered.
func TestFillRemembersUncacheableURLsButNotServerErrors(t *testing.T) {
	tests := []struct {
		name   string
		origin http.HandlerFunc
		marked bool
	}{
		{"no-store", answers(200, "no-store", "x"), true},
		{"private", answers(200, "private", "x"), true},
		{"server error", answers(500, "no-store", "x"), false},
		{"stored", answers(200, "max-age=60", "x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newTestClock()
			p := fillProxy(t, tt.origin, clock)
			f := testFill(t, p, "/u", nil)
			answerBody(t, f.run())
			o := f.s.cache.Lookup(f.h, []byte(f.key))
			if marked := o != nil && o.PassUntil > clock.Now(); marked != tt.marked {
				t.Fatalf("hit-for-miss marked %v, want %v", marked, tt.marked)
			}
		})
	}
}

// A site that inspects responses stops an answer its WAF refuses: the
// fill fails with ErrBlocked and nothing of it is stored.
func TestFillStopsWhatTheResponseInspectionRefuses(t *testing.T) {
	clock := newTestClock()
	p := fillProxy(t, answers(200, "max-age=60", "leak"), clock)
	f := testFill(t, p, "/secret", nil)
	var inspected []byte
	f.inspect = func(resp *fasthttp.Response) bool {
		inspected = bytes.Clone(resp.Header.Peek("Cache-Control"))
		return false
	}
	res := f.run()
	if !errors.Is(res.err, ErrBlocked) || res.entry != nil || res.resp != nil {
		t.Fatalf("fill: err %v, entry %v, resp %v; want ErrBlocked and nothing to answer with", res.err, res.entry, res.resp)
	}
	if string(inspected) != "max-age=60" {
		t.Errorf("inspection saw Cache-Control %q, want the origin's answer", inspected)
	}
	if o := f.s.cache.Lookup(f.h, []byte(f.key)); o != nil && len(o.Variants) > 0 {
		t.Error("the refused answer was stored")
	}
}

// A fill takes from the request it answers what that request's fill
// needs: why it missed, who asks (the identity its private answers and
// purges act for), the client its interim responses go to, the
// hit-for-pass marker it came through, and itself as the requester PHP
// must not run for once it left (unless others wait on the fill). A
// background refresh takes none of that: its client has its answer and
// may be gone before it ends; nor does a warm-up, which nobody asked for.
func TestNewFillTakesFromTheRequestWhatItsFillNeeds(t *testing.T) {
	tests := []struct {
		name       string
		marked     bool // the URL is hit-for-miss: the request fills alone
		by         bool // a request asks
		background bool
		stale      bool
		fwd        string
		request    bool // id, client and passUntil are the request's
		requester  bool
	}{
		{name: "a page's miss that others may wait on", by: true, fwd: fwdMiss, request: true},
		{name: "a page's miss that fills alone", marked: true, by: true, fwd: fwdURIMiss, request: true, requester: true},
		{name: "a background refresh", by: true, background: true, stale: true, fwd: fwdStale},
		{name: "a warm-up of a stale page", stale: true, fwd: fwdStale},
		{name: "a warm-up of a missing page", fwd: fwdMiss},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newTestClock()
			p := fillProxy(t, nil, clock)
			r := beforeLookup(t, p, "/page", "Cookie: sess=abc")
			if tt.marked {
				r.s.cache.MarkPass(r.h, string(r.key), clock.Now()+int64(time.Minute))
			}
			if v := stageLookup(r); v != proceed {
				t.Fatalf("lookup: %v, want a miss", v)
			}
			var stale *cache.Entry
			if tt.stale {
				stale = staleCopy(clock.Now(), "old", 0, false)
			}
			var by *request
			if tt.by {
				by = r
			}
			req := r.upstreamRequest()
			defer fasthttp.ReleaseRequest(req)
			f := newFill(p, r.g, r.s, req, string(r.key), r.h, stale, by, tt.background)
			if f.fwd != tt.fwd || f.stale != stale || f.scope != fillHost {
				t.Errorf("fwd %q, stale %v, scope %q; want %q, %v, %q", f.fwd, f.stale != nil, f.scope, tt.fwd, tt.stale, fillHost)
			}
			if got := f.id != 0 && f.id == r.identity() && f.client == r.ctx && f.passUntil == r.handoff.passUntil; got != tt.request {
				t.Errorf("the request's identity, client and hit-for-pass marker taken: %v, want %v", got, tt.request)
			}
			if !tt.request && (f.id != 0 || f.client != nil || f.passUntil != 0) {
				t.Errorf("id %x, client %v, passUntil %d taken by a fill for nobody waiting", f.id, f.client != nil, f.passUntil)
			}
			if got := f.requester != nil; got != tt.requester {
				t.Errorf("requester set %v, want %v", got, tt.requester)
			}
		})
	}
}
