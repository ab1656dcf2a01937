package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A stage added to the list once runs for a client's HTTP/1.1 request,
// for an HTTP/2 inline hit and for every fragment of an ESI page.
func TestStageAddedOnceRunsForEveryEntry(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/esi":
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			io.WriteString(w, `<esi:include src="/f1"/>-<esi:include src="/f2"/>`)
		default:
			w.Header().Set("Cache-Control", "max-age=300")
			io.WriteString(w, "["+r.URL.Path+"]")
		}
	})
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	p := newTestProxy(t, cfg, nil)
	var mu sync.Mutex
	seen := map[string]int{}
	p.steps = newSteps(insertStage(p.steps.stages, "admit", stage{name: "count", run: func(r *request) verdict {
		kind := [...]string{kindPage: "page", kindInline: "inline", kindFragment: "fragment"}[r.kind]
		mu.Lock()
		seen[kind]++
		mu.Unlock()
		return proceed
	}}))
	host := "site.test"
	serve := func(path string) string {
		ctx := requestCtx("GET", host, path, false)
		p.ServeFastHTTP(ctx)
		return string(ctx.Response.Body())
	}
	serve("/page")
	if !p.ServeHit(requestCtx("GET", host, "/page", false)) {
		t.Fatal("inline hit declined")
	}
	if body := serve("/esi"); body != "[/f1]-[/f2]" {
		t.Fatalf("assembled page %q", body)
	}
	want := map[string]int{"page": 2, "inline": 1, "fragment": 2}
	mu.Lock()
	defer mu.Unlock()
	for kind, n := range want {
		if seen[kind] != n {
			t.Errorf("%s requests seen by the added stage: %d, want %d (all: %v)", kind, seen[kind], n, seen)
		}
	}
}

// Each kind of request runs the stages compiled for it: an inline hit
// stops after lookup, a fragment skips what only a client's request has,
// a warm fetch stops after key (warmFill ends it).
func TestEachKindRunsItsOwnStages(t *testing.T) {
	st := newSteps(pipeline())
	want := [numKinds]string{
		kindPage:     "client admit rewrite purge identity key lookup guard crawler fill respond stats log",
		kindInline:   "client admit rewrite identity key lookup respond stats log",
		kindFragment: "admit rewrite identity key lookup guard fill respond",
		kindWarm:     "admit rewrite identity key",
	}
	for k, w := range want {
		if got := strings.Join(st.of[k].names, " "); got != w {
			t.Errorf("kind %d runs %q, want %q", k, got, w)
		}
	}
}

// A request that leads a fill looks in the cache again first: a fill
// that ended between its lookup and its joining stored the page, and the
// origin is not asked twice.
func TestFlightLeaderFindingTheEntryStoredDoesNotCallTheOrigin(t *testing.T) {
	o := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=300")
		io.WriteString(w, "page")
	})
	p := newTestProxy(t, testConfig(o.URL), nil)
	late := p.clientRequest(requestCtx("GET", "site.test", "/p", false), kindPage)
	defer late.release()
	for _, name := range []string{"admit", "purge", "identity", "key", "lookup"} {
		if v := stageNamed(t, p, name).run(late); v != proceed {
			t.Fatalf("stage %s: %v, want a miss to go on", name, v)
		}
	}
	// Meanwhile another request misses, fills and stores the page.
	first := requestCtx("GET", "site.test", "/p", false)
	p.ServeFastHTTP(first)
	if cs := string(first.Response.Header.Peek("Cache-Status")); cs != "ramjet; fwd=miss; stored" {
		t.Fatalf("first request: %q", cs)
	}
	stageNamed(t, p, "fill").run(late)
	stageNamed(t, p, "respond").run(late)
	if n := o.hits.Load(); n != 1 {
		t.Fatalf("origin asked %d times, want once", n)
	}
	if cs, body := string(late.ctx.Response.Header.Peek("Cache-Status")), string(late.ctx.Response.Body()); cs != "ramjet; fwd=miss; collapsed" || body != "page" {
		t.Fatalf("late request answered %q %q", cs, body)
	}
}

func stageNamed(t *testing.T, p *Proxy, name string) stage {
	t.Helper()
	for _, st := range p.steps.stages {
		if st.name == name {
			return st
		}
	}
	t.Fatalf("no stage %q", name)
	return stage{}
}

// fragmentOrigin serves an ESI page with one fragment whose behaviour
// the test sets: its Cache-Control, whether it fails, and it counts
// full answers and 304s.
type fragmentOrigin struct {
	*testOrigin
	cacheControl         atomic.Value // string
	fail                 atomic.Bool
	serial, full, notMod atomic.Int64
}

func newFragmentOrigin(t *testing.T, cacheControl string) *fragmentOrigin {
	f := &fragmentOrigin{}
	f.cacheControl.Store(cacheControl)
	f.testOrigin = newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			w.Header().Set("X-LiteSpeed-Cache-Control", "public,max-age=300,esi=on")
			io.WriteString(w, `<p><esi:include src="/frag"/></p>`)
			return
		}
		if f.fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Cache-Control", f.cacheControl.Load().(string))
		w.Header().Set("ETag", `"frag-v1"`)
		if r.Header.Get("If-None-Match") == `"frag-v1"` {
			f.notMod.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		f.full.Add(1)
		io.WriteString(w, "frag "+string(rune('0'+f.serial.Add(1))))
	})
	return f
}

// A stale fragment is served while one background request revalidates
// it; the origin's 304 refreshes the stored copy, body and all.
func TestFragmentRevalidatesWith304(t *testing.T) {
	o := newFragmentOrigin(t, "max-age=1")
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	clock := newTestClock()
	p := newTestProxy(t, cfg, clock.Now)
	base := serveProxy(t, p)
	if r := get(t, base+"/page"); r.body != "<p>frag 1</p>" {
		t.Fatalf("first page %q", r.body)
	}
	clock.Advance(2 * time.Second) // the fragment goes stale, within the site's grace
	if r := get(t, base+"/page"); r.body != "<p>frag 1</p>" {
		t.Fatalf("page with the stale fragment %q", r.body)
	}
	p.bg.Wait() // the background revalidation
	if o.notMod.Load() != 1 || o.full.Load() != 1 {
		t.Fatalf("origin answered %d 304s and %d full fragments, want 1 and 1", o.notMod.Load(), o.full.Load())
	}
	if r := get(t, base+"/page"); r.body != "<p>frag 1</p>" {
		t.Fatalf("page after revalidation %q", r.body)
	}
	if n := o.notMod.Load() + o.full.Load(); n != 2 {
		t.Fatalf("the revalidated fragment was fetched again (%d requests)", n)
	}
}

// A fragment past its freshness whose origin now fails is served from
// its stale copy within stale-if-error, not left empty.
func TestFragmentServedStaleIfError(t *testing.T) {
	o := newFragmentOrigin(t, "max-age=1, stale-if-error=60")
	cfg := testConfig(o.URL)
	cfg.Default.ESI, cfg.Default.Grace = true, 0
	clock := newTestClock()
	base := serveProxy(t, newTestProxy(t, cfg, clock.Now))
	get(t, base+"/page")
	o.fail.Store(true)
	clock.Advance(2 * time.Second)
	if r := get(t, base+"/page"); r.body != "<p>frag 1</p>" {
		t.Fatalf("page while the fragment's origin fails: %q", r.body)
	}
	if o.notMod.Load() != 0 {
		t.Fatal("a failing origin answered 304")
	}
	o.fail.Store(false)
	clock.Advance(time.Minute) // past stale-if-error, within the keep window: revalidated
	if r := get(t, base+"/page"); r.body != "<p>frag 1</p>" || o.notMod.Load() != 1 {
		t.Fatalf("page after the origin recovered: %q after %d 304s, want the kept fragment revalidated", r.body, o.notMod.Load())
	}
}

// An uncacheable fragment is remembered as such (hit-for-miss), so
// concurrent pages do not queue behind one another's fetch of it.
func TestUncacheableFragmentIsHitForMiss(t *testing.T) {
	o := newFragmentOrigin(t, "no-store")
	cfg := testConfig(o.URL)
	cfg.Default.ESI = true
	p := newTestProxy(t, cfg, nil)
	base := serveProxy(t, p)
	get(t, base+"/page")
	key := []byte("http://" + strings.TrimPrefix(base, "http://") + "/frag")
	obj := p.cache.Lookup(p.cache.Hash(key), key)
	if obj == nil || obj.PassUntil == 0 {
		t.Fatalf("fragment not remembered as uncacheable: %+v", obj)
	}
	if r := get(t, base+"/page"); r.body != "<p>frag 2</p>" {
		t.Fatalf("second page %q", r.body)
	}
}

// A page that started before a reload is assembled on the generation it
// started with: its fragments come from the origin it was filled from.
func TestESIPageFinishesOnItsOwnGeneration(t *testing.T) {
	asked, release := make(chan struct{}), make(chan struct{})
	before := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			close(asked)
			<-release
			w.Header().Set("X-LiteSpeed-Cache-Control", "no-cache,esi=on")
			io.WriteString(w, `<esi:include src="/frag"/>`)
			return
		}
		io.WriteString(w, "[before]")
	})
	after := newTestOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "[after]")
	})
	cfg := testConfig(before.URL)
	cfg.Default.ESI = true
	p := newTestProxy(t, cfg, nil)
	base := serveProxy(t, p)
	page := make(chan reply, 1)
	go func() { page <- get(t, base+"/page") }()
	<-asked
	cfg.Origin.Servers = []string{after.URL}
	if err := p.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	close(release)
	if r := <-page; r.body != "[before]" {
		t.Fatalf("page begun before the reload assembled %q, want its own generation's fragment", r.body)
	}
	if r := get(t, base+"/frag"); r.body != "[after]" {
		t.Fatalf("a request after the reload got %q", r.body)
	}
}
