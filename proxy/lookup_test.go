package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// getCtx is a client's GET of path for fillHost with the header lines
// ("Name: value").
func getCtx(path string, lines ...string) *fasthttp.RequestCtx {
	ctx := requestCtx(http.MethodGet, fillHost, path, false)
	for _, l := range lines {
		k, v, _ := strings.Cut(l, ":")
		ctx.Request.Header.Add(k, strings.TrimSpace(v))
	}
	return ctx
}

// beforeLookup is a client's GET (getCtx) taken through the stages
// before lookup. It is released when the test ends.
func beforeLookup(t *testing.T, p *Proxy, path string, lines ...string) *request {
	t.Helper()
	r := p.clientRequest(getCtx(path, lines...), kindPage)
	t.Cleanup(r.release)
	for _, st := range p.steps.stages {
		if st.name == "lookup" {
			return r
		}
		if v := st.run(r); v != proceed {
			t.Fatalf("stage %s before lookup: %v, want it to go on", st.name, v)
		}
	}
	t.Fatal("no lookup stage")
	return nil
}

// leftForFill is what lookup left for fill: the one hand-off between stages.
func leftForFill(r *request) (stale *cache.Entry, fwd string, coalesce bool) {
	return r.handoff.stale, r.handoff.fwd, r.handoff.coalesce
}

// copyAt is a stored copy of body, stored at now, with the lifetimes
// given relative to now.
func copyAt(now int64, fresh, staleFor, errorFor time.Duration) *cache.Entry {
	e := &cache.Entry{Status: http.StatusOK, Body: []byte("stored"), Stored: now - int64(time.Minute)}
	e.FreshUntil = now + int64(fresh)
	e.StaleUntil = max(e.FreshUntil, now+int64(staleFor))
	e.ErrorUntil = max(e.FreshUntil, now+int64(errorFor))
	return e
}

// Lookup answers what the cache may answer at once and leaves fill the
// rest, with the stale copy to revalidate, why it missed and whether the
// misses of the key may share one fill; an HTTP/2 inline hit (ServeHit)
// is declined, unchanged, for all that is not a fresh copy.
func TestLookupAnswersOrHandsTheMissToFill(t *testing.T) {
	fresh := func(now int64) *cache.Entry { return copyAt(now, time.Minute, 0, 0) }
	tests := []struct {
		name   string
		stored func(now int64) *cache.Entry // nil: nothing stored
		// vary: stored as the variant for Accept-Language: de; the
		// request asks for en.
		vary         bool
		mark         bool // the URL is marked hit-for-miss
		purged       bool // everything was purged after the copy was stored
		inline       bool
		lines        []string
		want         verdict
		status       string // the answer's Cache-Status, when answered
		fwd          string // otherwise: why it missed
		coalesce     bool
		revalidates  bool // fill gets the stored copy to revalidate
		refreshesNow bool // a background refresh asks the origin
	}{
		{name: "nothing stored is a miss that coalesces", want: proceed, fwd: fwdMiss, coalesce: true},
		{name: "a fresh copy is a hit", stored: fresh, want: answered, status: string(csHit)},
		{name: "a fresh copy answers an inline hit", stored: fresh, inline: true, want: answered, status: string(csHit)},
		{name: "a stale copy within stale-while-revalidate is served while it is refreshed",
			stored: func(now int64) *cache.Entry { return copyAt(now, -time.Second, time.Minute, 0) },
			want:   answered, status: string(csStale), refreshesNow: true},
		{name: "an inline hit is declined for a stale copy",
			stored: func(now int64) *cache.Entry { return copyAt(now, -time.Second, time.Minute, 0) },
			inline: true, want: declined},
		{name: "a copy servable only if the origin fails is revalidated",
			stored: func(now int64) *cache.Entry { return copyAt(now, -time.Second, 0, time.Minute) },
			want:   proceed, fwd: fwdStale, coalesce: true, revalidates: true},
		{name: "a must-revalidate copy past its lifetime is revalidated",
			stored: func(now int64) *cache.Entry {
				e := copyAt(now, -time.Second, time.Minute, time.Minute)
				e.MustRevalidate, e.KeepUntil = true, now+int64(time.Minute)
				return e
			},
			want: proceed, fwd: fwdStale, coalesce: true, revalidates: true},
		{name: "a hit-for-miss mark sends the request upstream alone", mark: true, want: proceed, fwd: fwdURIMiss},
		{name: "an inline hit is declined for a hit-for-miss mark", mark: true, inline: true, want: declined},
		{name: "a copy not said shared does not answer a request with Authorization", stored: fresh,
			lines: []string{"Authorization: Basic dTpw"}, want: proceed, fwd: fwdMiss},
		{name: "a shared copy answers a request with Authorization",
			stored: func(now int64) *cache.Entry { e := fresh(now); e.Shared = true; return e },
			lines:  []string{"Authorization: Basic dTpw"}, want: answered, status: string(csHit)},
		{name: "a purged copy is a miss", stored: fresh, purged: true, want: proceed, fwd: fwdMiss, coalesce: true},
		{name: "another variant's copy is a vary miss", stored: fresh, vary: true,
			lines: []string{"Accept-Language: en"}, want: proceed, fwd: fwdVaryMiss, coalesce: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newTestClock()
			o := newTestOrigin(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Cache-Control", "max-age=60")
				io.WriteString(w, "from the origin")
			})
			p := newTestProxy(t, testConfig(o.URL), clock.Now)
			r := beforeLookup(t, p, "/page", tt.lines...)
			c, now := r.s.cache, clock.Now()
			var e *cache.Entry
			if tt.stored != nil {
				e = tt.stored(now)
				var vary cache.VarySpec
				if tt.vary {
					vary.Headers = []string{"accept-language"}
					var de fasthttp.RequestHeader
					de.Set("Accept-Language", "de")
					e.Variant = string(appendVariant(nil, &de, &vary))
				}
				c.Insert(r.h, string(r.key), vary, e)
			}
			if tt.mark {
				c.MarkPass(r.h, string(r.key), now+int64(10*time.Second))
			}
			if tt.purged {
				clock.Advance(time.Millisecond)
				c.PurgeAll(false, 0)
				clock.Advance(time.Millisecond)
			}
			if tt.inline {
				serveHit(t, p, tt.want, tt.status, e, clock.Now(), tt.lines...)
				return
			}
			v := stageLookup(r)
			if v != tt.want {
				t.Fatalf("verdict %v, want %v", v, tt.want)
			}
			if v == answered {
				if string(r.res.status) != tt.status || r.res.entry != e {
					t.Errorf("answered %q with %p, want %q with the stored copy %p", r.res.status, r.res.entry, tt.status, e)
				}
			}
			if v == proceed {
				stale, fwd, coalesce := leftForFill(r)
				if fwd != tt.fwd || coalesce != tt.coalesce || (stale != nil) != tt.revalidates || stale != nil && stale != e {
					t.Errorf("left fill stale %v, fwd %q, coalesce %v; want stale %v, fwd %q, coalesce %v",
						stale != nil, fwd, coalesce, tt.revalidates, tt.fwd, tt.coalesce)
				}
			}
			if tt.refreshesNow {
				testbed.WaitFor(t, 10*time.Second, "the background refresh to reach the origin", func() bool { return o.hits.Load() == 1 })
			} else if n := o.hits.Load(); n != 0 {
				t.Errorf("lookup asked the origin %d times", n)
			}
		})
	}
}

// serveHit sends a GET of /page as an HTTP/2 inline hit and checks that
// it was answered with status and the body of e, or declined having
// written nothing.
func serveHit(t *testing.T, p *Proxy, want verdict, status string, e *cache.Entry, now int64, lines ...string) {
	t.Helper()
	ctx := getCtx("/page", lines...)
	ok := p.ServeHit(ctx)
	switch {
	case ok != (want == answered):
		t.Fatalf("ServeHit answered %v, want %v", ok, want == answered)
	case ok && (respField(&ctx.Response, "Cache-Status") != status || string(ctx.Response.Body()) != string(e.Body)):
		t.Errorf("inline hit %q %q, want %q %q", respField(&ctx.Response, "Cache-Status"), ctx.Response.Body(), status, e.Body)
	case !ok && (len(ctx.Response.Body()) > 0 || respField(&ctx.Response, "Cache-Status") != ""):
		t.Errorf("a declined inline hit wrote %q", ctx.Response.Body())
	}
}
