package phppool

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestPoolLogsSlowRequestsAndPHPStderr(t *testing.T) {
	var logs logBuffer
	p := startPool(t, Config{SlowRequest: 50 * time.Millisecond}, logs.logger())
	script := writeScript(t, "index.php", poolScript)
	stderrScript := testdataScript(t, "stderr.php")
	_, pid, _, err := get(p, script, "ms=100")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runFor(p, stderrScript, "GET", ""); err != nil {
		t.Fatal(err)
	}
	// The stderr record is logged only when the caller passes no writer.
	if _, err := p.Do(t.Context(), scriptParams(stderrScript, "GET", ""), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	pool := "pool=" + t.Name()
	for _, want := range []string{
		"slow php request", pool, "pid=" + strconv.Itoa(pid), "script=" + script,
		"line=\"hello from php stderr\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "hello from php stderr"); n != 1 {
		t.Errorf("stderr line logged %d times, want once (a caller's writer takes it)", n)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, pool) {
			t.Errorf("log line without the pool name: %s", line)
		}
	}
}

func TestPoolRecyclesWorkerOverMaxRSS(t *testing.T) {
	tests := []struct {
		name         string
		maxRSS       int64
		wantRecycled bool
	}{
		{"worker above the limit is recycled after each request", 1, true},
		{"worker below the limit is kept", 1 << 40, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, script := newTestPool(t, Config{Max: 1, MaxRSS: tt.maxRSS})
			if st := p.Status(); st[0].RSS <= 0 {
				t.Fatalf("status %+v, want the worker's RSS", st)
			}
			pids := map[int]bool{}
			for i := range 3 {
				_, pid, rest, err := get(p, script, "i="+strconv.Itoa(i))
				if err != nil || rest != strconv.Itoa(i) {
					t.Fatalf("request %d: %q, %v", i, rest, err)
				}
				pids[pid] = true
			}
			want, wantRecycled := 1, uint64(0)
			if tt.wantRecycled {
				want, wantRecycled = 3, 3
			}
			if len(pids) != want || p.Stats().Recycled != wantRecycled {
				t.Fatalf("%d workers served 3 requests, %d recycled; want %d, %d", len(pids), p.Stats().Recycled, want, wantRecycled)
			}
		})
	}
}

func TestPoolStatsCountResumes(t *testing.T) {
	p, script := newTestPool(t, Config{IdleSuspend: 100 * time.Millisecond})
	for i := range 2 {
		_, pid, _, err := get(p, script, "i="+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		testbed.WaitFor(t, 5*time.Second, "worker stopped", func() bool { return testbed.ProcState(pid) == "T" })
	}
	if _, _, _, err := get(p, script, "i=2"); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if st.Requests != 3 || st.Spawns != 1 || st.Resumes != 2 || st.Crashes != 0 {
		t.Fatalf("stats %+v, want 3 requests, 1 spawn, 2 resumes", st)
	}
	h := st.ResumeLatency
	if h.Count() != 2 || h.Sum <= 0 || h.Quantile(0.5) <= 0 || h.Quantile(0.99) < h.Quantile(0.5) {
		t.Fatalf("resume latency %+v (p50 %v, p99 %v), want 2 samples", h, h.Quantile(0.5), h.Quantile(0.99))
	}
}

func TestHistogramQuantileIsTheBucketBound(t *testing.T) {
	var h histogram
	for _, d := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, 300 * time.Microsecond, 2 * time.Second} {
		h.observe(d)
	}
	s := h.snapshot()
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.25, 100 * time.Microsecond},
		{0.5, 500 * time.Microsecond},
		{0.75, 500 * time.Microsecond},
		{1, time.Second}, // overflow bucket: the last bound
	}
	for _, tt := range tests {
		if got := s.Quantile(tt.q); got != tt.want {
			t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if (Histogram{}).Quantile(0.5) != 0 {
		t.Error("empty histogram has a quantile")
	}
}
