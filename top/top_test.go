package top

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

var t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func snap(at time.Time, sites ...Site) Snapshot { return Snapshot{At: at, Sites: sites} }

// Rates are the difference of the totals over the time between two
// snapshots; latency the upstream time of the requests in between.
func TestAFrameComparesTwoSnapshots(t *testing.T) {
	prev := snap(t0, Site{Name: "a.test", Totals: Counts{Requests: 100, Origin: 10, OriginSeconds: 1}},
		Site{Name: "b.test", Totals: Counts{Requests: 5}})
	cur := snap(t0.Add(2*time.Second),
		Site{Name: "a.test", Totals: Counts{Requests: 300, Origin: 14, OriginSeconds: 1.2}, Minute: Counts{HitRatio: 0.9, Errors: 3, WAFBlocked: 1}},
		Site{Name: "b.test", Totals: Counts{Requests: 7}, Minute: Counts{HitRatio: 0.5, Origin: 2, OriginSeconds: 0.5}},
		Site{Name: "c.test", Totals: Counts{Requests: 9}})
	f := NewFrame(prev, cur, ByRate)
	want := []Row{
		{Name: "a.test", ReqPerSec: 100, HitRatio: 0.9, Errors: 3, WAF: 1, Latency: 50 * time.Millisecond},
		{Name: "b.test", ReqPerSec: 1, HitRatio: 0.5, Latency: 250 * time.Millisecond}, // none upstream in between: the minute's
		{Name: "c.test"}, // new: no rate yet
	}
	if fmt.Sprint(f.Rows) != fmt.Sprint(want) {
		t.Fatalf("rows:\n got %+v\nwant %+v", f.Rows, want)
	}
}

func TestRowsSortByTheChosenKey(t *testing.T) {
	rows := []Row{
		{Name: "b", ReqPerSec: 5, HitRatio: 0.1, Errors: 9, WAF: 0, Latency: 3},
		{Name: "a", ReqPerSec: 1, HitRatio: 0.9, Errors: 0, WAF: 7, Latency: 1},
		{Name: "c", ReqPerSec: 9, HitRatio: 0.5, Errors: 1, WAF: 1, Latency: 2},
	}
	tests := []struct {
		key  Key
		want string
	}{
		{ByRate, "c b a"}, {ByHits, "a c b"}, {ByErrors, "b c a"}, {ByWAF, "a c b"}, {ByLatency, "b c a"}, {ByName, "a b c"},
	}
	for _, tt := range tests {
		sortRows(rows, tt.key)
		var got []string
		for _, r := range rows {
			got = append(got, r.Name)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("sort by %c: %v, want %s", tt.key, got, tt.want)
		}
	}
}

// The view fits the terminal: no line wider than it, no more lines than
// it has, the sites that do not fit counted.
func TestRenderFitsTheTerminal(t *testing.T) {
	f := Frame{At: t0, Sort: ByRate, Conns: 12, Parked: 3, Pools: []Pool{{Name: "a.test", Busy: 2, Idle: 1, Suspended: 4, Queued: 5}}}
	for i := range 40 {
		f.Rows = append(f.Rows, Row{Name: fmt.Sprintf("site-with-a-rather-long-name-%02d.example.com", i), ReqPerSec: 12345.6,
			HitRatio: 0.975, Latency: 12300 * time.Microsecond, Errors: 1234567, WAF: 7})
	}
	for _, size := range [][2]int{{80, 24}, {120, 50}, {80, 10}} {
		lines := Render(f, "http://127.0.0.1:9090", size[0], size[1])
		if len(lines) > size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(strings.NewReplacer(esc+"7m", "", esc+"0m", "").Replace(l)); n > size[0] {
				t.Errorf("%dx%d: line of %d columns: %q", size[0], size[1], n, l)
			}
		}
		text := strings.Join(lines, "\n")
		wants := []string{"conns 12 (parked 3)", "12345.6  97.5%      12.3", "a.test", "2      1      4       5", "q quit"}
		if size[1] < 40+8 {
			wants = append(wants, "more sites")
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%dx%d: no %q in\n%s", size[0], size[1], want, text)
			}
		}
	}
}

func TestConnectionsSumEveryListener(t *testing.T) {
	text := `ramjet_client_connections{listener="main"} 10
ramjet_client_connections{listener="tls"} 5
ramjet_client_connections_parked{listener="main"} 4
ramjet_client_connections_refused_total{listener="main",reason="per_ip"} 99
`
	open, parked, err := connections(strings.NewReader(text))
	if err != nil || open != 15 || parked != 4 {
		t.Fatalf("connections: %d open, %d parked, %v; want 15, 4", open, parked, err)
	}
}

// fakeAdmin answers the three endpoints the view reads; requests grows
// by 10 a call of /stats.
func fakeAdmin(t *testing.T, token string) *httptest.Server {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/stats":
			mu.Lock()
			requests += 10
			n := requests
			mu.Unlock()
			fmt.Fprintf(w, `{"sites":[{"site":"a.test","totals":{"requests":%d},"minute":{"hit_ratio":0.5}},{"site":"b.test","totals":{"requests":1},"minute":{"hit_ratio":1}}]}`, n)
		case "/php/status":
			fmt.Fprint(w, `{"pools":[{"name":"a.test","queued":2,"workers":[{"state":"busy"},{"state":"idle"},{"state":"suspended"},{"state":"idle"}]}]}`)
		case "/metrics":
			fmt.Fprint(w, "ramjet_client_connections{listener=\"main\"} 3\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchReadsTheAdminAPI(t *testing.T) {
	srv := fakeAdmin(t, "op")
	s, err := (&Source{Admin: srv.URL, Token: "op", Client: srv.Client()}).Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sites) != 2 || s.Sites[0].Totals.Requests != 10 || s.Sites[1].Minute.HitRatio != 1 || s.Conns != 3 {
		t.Errorf("snapshot %+v", s)
	}
	if want := (Pool{Name: "a.test", Busy: 1, Idle: 2, Suspended: 1, Queued: 2}); len(s.Pools) != 1 || s.Pools[0] != want {
		t.Errorf("pools %+v, want %+v", s.Pools, want)
	}
	_, err = (&Source{Admin: srv.URL, Token: "wrong", Client: srv.Client()}).Fetch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("with a wrong token: %v, want the 401", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the view and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The view refreshes on its own, re-sorts on a key and ends on q,
// leaving the alternate screen.
func TestRunRefreshesSortsAndQuits(t *testing.T) {
	srv := fakeAdmin(t, "op")
	keys := make(chan byte)
	var out syncBuffer
	done := make(chan error)
	go func() {
		done <- Run(context.Background(), Config{Source: &Source{Admin: srv.URL, Token: "op", Client: srv.Client()},
			Every: 20 * time.Millisecond}, keys, &out)
	}()
	waitFor(t, &out, func(s string) bool { return strings.Contains(s, "sort req/s") && strings.Contains(s, "a.test") })
	keys <- 'n'
	waitFor(t, &out, func(s string) bool { return strings.Contains(s, "sort site") })
	keys <- 'q'
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), esc+"?25h"+esc+"?1049l") {
		t.Errorf("the view did not leave the alternate screen: ends %q", out.String()[max(len(out.String())-40, 0):])
	}
}

func waitFor(t *testing.T, out *syncBuffer, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the view never showed what was expected:\n%q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// FuzzConnections: any /metrics text reads without a panic, and what it
// sums comes from the two gauges alone.
func FuzzConnections(f *testing.F) {
	f.Add("ramjet_client_connections{listener=\"main\"} 10\nramjet_client_connections_parked{listener=\"main\"} 4\n")
	f.Add("ramjet_client_connections{} x\n")
	f.Add("other{a=\"b\"} 5\n# HELP x\n")
	f.Fuzz(func(t *testing.T, text string) {
		open, parked, err := connections(strings.NewReader(text))
		if err == nil && !strings.Contains(text, "ramjet_client_connections") && (open != 0 || parked != 0) {
			t.Fatalf("%q: %d open, %d parked without the gauges", text, open, parked)
		}
	})
}

// What the admin listener sends (site and pool names, an error's body)
// reaches the terminal with its control characters shown, not obeyed:
// the only escape sequences written are the view's own.
func TestRenderShowsTheServersControlCharactersAsText(t *testing.T) {
	f := Frame{At: t0, Rows: []Row{{Name: "\x1b]2;pwned\x07evil"}, {Name: "\x1b[2Jb.test"}},
		Pools: []Pool{{Name: "pool\u009b2J"}}, Err: fmt.Errorf("GET /stats: 500: \x1b[31mred")}
	lines := Render(f, "http://127.0.0.1:9090/\x1b[8m", 120, 24)
	screen := strings.Join(lines, "\n")
	if own := strings.Count(screen, "\x1b"); own != 2 || !strings.HasPrefix(lines[0], esc+"7m") {
		t.Errorf("%d ESC bytes written, want the header's 2:\n%q", own, screen)
	}
	for _, want := range []string{`\x1b]2;pwned\x07evil`, `\x1b[2Jb.test`, `pool\x9b2J`, `\x1b[31mred`, `9090/\x1b[8m`} {
		if !strings.Contains(screen, want) {
			t.Errorf("the view does not show %s:\n%q", want, screen)
		}
	}
	if strings.ContainsRune(screen, '\u009b') || strings.ContainsRune(screen, '\a') {
		t.Errorf("a C1 CSI or BEL reached the terminal:\n%q", screen)
	}
}

// An admin listener answering without end fills no more than maxJSON of
// top's memory: the fetch fails saying so.
func TestFetchBoundsTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"sites":[{"site":"`)) //nolint:errcheck // test server
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for range 2 * maxJSON >> 20 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	src := &Source{Admin: srv.URL, Client: srv.Client()}
	if _, err := src.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "over 8 MiB") {
		t.Errorf("Fetch of an endless answer: %v, want it refused over 8 MiB", err)
	}
}
