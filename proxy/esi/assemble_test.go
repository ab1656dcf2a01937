package esi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var errMissing = errors.New("no such fragment")

// fragments is a fake fetcher: src → body; "slow:" sources sleep until ctx
// is done or 100 ms passed; unknown sources fail.
type fragments map[string]string

func (f fragments) fetch(ctx context.Context, _ *Include, src string, _ int) ([]byte, error) {
	if strings.HasPrefix(src, "/slow") {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if strings.HasPrefix(src, "/hang") {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	b, ok := f[src]
	if !ok {
		return nil, fmt.Errorf("%s: %w", src, errMissing)
	}
	return []byte(b), nil
}

func assemble(t *testing.T, page string, f Fetcher, cfg AssembleConfig) (string, []Report) {
	t.Helper()
	doc, _ := Parse([]byte(page), 0)
	var out bytes.Buffer
	reps, err := Assemble(context.Background(), &out, doc, f, cfg)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	return out.String(), reps
}

func TestAssemble(t *testing.T) {
	frags := fragments{
		"/a": "A", "/b": "B", "/slow": "S", "/slow2": "S2", "/slow3": "S3",
		"/nest1": `<1<esi:include src="/nest2"/>1>`,
		"/nest2": `<2<esi:include src="/nest3"/>2>`,
		"/nest3": `<3<esi:include src="/nest4"/>3>`,
		"/nest4": `4`,
		"/self":  `x<esi:include src="/self"/>`,
	}
	tests := []struct {
		name    string
		page    string
		cfg     AssembleConfig
		want    string
		reports []string // "src depth err-substring"
	}{
		{"no includes", "plain", AssembleConfig{}, "plain", nil},
		{"order kept", `1<esi:include src="/a"/>2<esi:include src="/b"/>3<esi:include src="/a"/>4`, AssembleConfig{},
			"1A2B3A4", []string{"/a 1 ", "/b 1 ", "/a 1 "}},
		{"alt served", `<esi:include src="/missing" alt="/b"/>`, AssembleConfig{}, "B",
			[]string{"/missing 1 src failed, alt served"}},
		{"both fail: empty block", `x<esi:include src="/missing" alt="/gone"/>y`, AssembleConfig{}, "xy",
			[]string{"/missing 1 alt \"/gone\""}},
		{"fail without onerror is empty too", `x<esi:include src="/missing"/>y`, AssembleConfig{}, "xy",
			[]string{"/missing 1 no such fragment"}},
		{"timeout then alt", `x<esi:include src="/hang" alt="/a"/>y`, AssembleConfig{Timeout: 20 * time.Millisecond}, "xAy",
			[]string{"/hang 1 deadline exceeded"}},
		{"timeout then alt timeout: empty", `x<esi:include src="/hang" alt="/hang2" onerror="continue"/>y`, AssembleConfig{Timeout: 20 * time.Millisecond}, "xy",
			[]string{"/hang 1 alt \"/hang2\""}},
		{"nested within depth", `<esi:include src="/nest1"/>`, AssembleConfig{MaxDepth: 4}, "<1<2<3" + "4" + "3>2>1>",
			[]string{"/nest1 1 ", "/nest2 2 ", "/nest3 3 ", "/nest4 4 "}},
		{"nested beyond depth: include emptied", `<esi:include src="/nest1"/>`, AssembleConfig{}, "<1<2<33>2>1>",
			[]string{"/nest1 1 ", "/nest2 2 ", "/nest3 3 ", "/nest4 4 deeper than MaxDepth"}},
		{"self include stops at depth", `<esi:include src="/self"/>`, AssembleConfig{MaxDepth: 2}, "xx",
			[]string{"/self 1 ", "/self 2 ", "/self 3 deeper"}},
		{"inline written in place", `a<esi:inline name="/n">IN<esi:include src="/b"/></esi:inline>c`, AssembleConfig{}, "aINBc",
			[]string{"/n 1 ", "/b 2 "}},
		{"more includes than parallel", strings.Repeat(`<esi:include src="/slow"/>`, 5), AssembleConfig{Parallel: 2}, "SSSSS", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reps := assemble(t, tt.page, frags.fetch, tt.cfg)
			if got != tt.want {
				t.Errorf("output %q, want %q", got, tt.want)
			}
			if tt.reports == nil {
				return
			}
			if len(reps) != len(tt.reports) {
				t.Fatalf("reports %+v, want %v", reps, tt.reports)
			}
			for i, r := range reps {
				var errs string
				if r.Err != nil {
					errs = r.Err.Error()
				}
				head := fmt.Sprintf("%s %d ", r.Src, r.Depth)
				want := tt.reports[i]
				wantHead, wantErr, _ := strings.Cut(want, " ")
				wantDepth, wantErr, _ := strings.Cut(wantErr, " ")
				if head != wantHead+" "+wantDepth+" " || (wantErr == "") != (r.Err == nil) || !strings.Contains(errs, wantErr) {
					t.Errorf("report %d = %q %v, want %q", i, head, r.Err, want)
				}
			}
		})
	}
}

func TestAssembleAltServedIsBranchable(t *testing.T) {
	_, reps := assemble(t, `<esi:include src="/missing" alt="/a"/>`, fragments{"/a": "A"}.fetch, AssembleConfig{})
	if !errors.Is(reps[0].Err, ErrAltServed) || !errors.Is(reps[0].Err, errMissing) {
		t.Fatalf("err %v: want ErrAltServed wrapping the src error", reps[0].Err)
	}
}

// together is a fetcher whose fetches each wait until n of them are in
// flight at once (or all want have started, for a last short batch), so
// a page assembles only when its fragments are fetched in parallel; it
// records the largest number in flight. A fetch that waited 10 s in
// vain fails: the page came out fetched one at a time.
type together struct {
	n, want            int32
	cur, peak, started atomic.Int32
}

func (g *together) fetch(ctx context.Context, _ *Include, src string, _ int) ([]byte, error) {
	c := g.cur.Add(1)
	defer g.cur.Add(-1)
	for p := g.peak.Load(); c > p && !g.peak.CompareAndSwap(p, c); p = g.peak.Load() {
	}
	g.started.Add(1)
	deadline := time.Now().Add(10 * time.Second)
	for g.peak.Load() < g.n && g.started.Load() < g.want {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("%s: fetched alone: %d in flight", src, g.cur.Load())
		}
		time.Sleep(time.Millisecond)
	}
	return []byte(src[len(src)-1:]), nil
}

func TestAssembleFetchesInParallel(t *testing.T) {
	g := &together{n: 3, want: 3}
	got, _ := assemble(t, `<esi:include src="/f1"/>-<esi:include src="/f2"/>-<esi:include src="/f3"/>`, g.fetch, AssembleConfig{})
	if got != "1-2-3" || g.peak.Load() != 3 {
		t.Fatalf("got %q with %d fetches in flight at most, want 1-2-3 with 3", got, g.peak.Load())
	}
}

func TestAssembleBoundsParallelism(t *testing.T) {
	g := &together{n: 3, want: 10}
	got, _ := assemble(t, strings.Repeat(`<esi:include src="/x"/>`, 10), g.fetch, AssembleConfig{Parallel: 3})
	if got != strings.Repeat("x", 10) {
		t.Fatalf("got %q", got)
	}
	if p := g.peak.Load(); p != 3 {
		t.Fatalf("peak concurrency %d, want 3", p)
	}
}

func TestAssemblePassesDepthAndInclude(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	fetch := func(_ context.Context, inc *Include, src string, depth int) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		seen[src+" "+inc.CacheControl] = depth
		if src == "/p" {
			return []byte(`<esi:include src="/q" cache-control="public"/>`), nil
		}
		return nil, nil
	}
	assemble(t, `<esi:include src="/p" cache-control="private,no-vary"/>`, fetch, AssembleConfig{})
	if seen["/p private,no-vary"] != 1 || seen["/q public"] != 2 {
		t.Fatalf("seen %v", seen)
	}
}

func TestAssembleCapsNestedFanOut(t *testing.T) {
	var calls atomic.Int32
	fan := strings.Repeat(`<esi:include src="/fan"/>`, 50)
	fetch := func(context.Context, *Include, string, int) ([]byte, error) {
		calls.Add(1)
		return []byte(fan), nil
	}
	_, reps := assemble(t, fan, fetch, AssembleConfig{MaxDepth: 3})
	if n := int(calls.Load()); n != 50+nestedBudget {
		t.Fatalf("%d fetches, want %d", n, 50+nestedBudget)
	}
	var capped int
	for _, r := range reps {
		if errors.Is(r.Err, ErrTooManyIncludes) {
			capped++
		}
	}
	if capped == 0 {
		t.Fatal("no ErrTooManyIncludes report")
	}
}

type failWriter struct{ n int }

var errWrite = errors.New("client gone")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n--; w.n < 0 {
		return 0, errWrite
	}
	return len(p), nil
}

func TestAssembleReturnsWriterError(t *testing.T) {
	doc, _ := Parse([]byte(`a<esi:include src="/a"/>b`), 0)
	_, err := Assemble(context.Background(), &failWriter{n: 1}, doc, fragments{"/a": "A"}.fetch, AssembleConfig{})
	if !errors.Is(err, errWrite) {
		t.Fatalf("err %v, want the writer's", err)
	}
}
