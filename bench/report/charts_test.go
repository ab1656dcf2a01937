package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChartsOfTheFixtureDrawEveryGroupFromItsRecords(t *testing.T) {
	d := fixture(t)
	want := map[string][]string{
		"cached.png":      {"61500", "725 B page", `ESI page: 30 KB assembled\n(30720 B)`, "Varnish, ESI page (ESI on)"},
		"php-reqs.png":    {`hello.php\n(Hello, World!)`, "7500"},
		"php-latency.png": {"p99 (median over the rounds; whisker up to the worst round)"},
		"wordpress.png":   {`home\n(cached ÷ uncached 718×)`, "set logscale y"},
		"h2.png":          {"ramjet (cached), HTTP/1.1 (--h1)", "150000"},
		"h2-rss.png":      {"peak RSS", "64.5"},
		"tail.png":        {"p99.9", "35.500"},
		"idle-rss.png":    {"29.3 MiB", "1000\t29.3"},
		"warm.png":        {"ramjet, warm-up on", "1\t80.00", "seconds after the purge"},
	}
	got := charts(d)
	if len(got) != len(want) {
		t.Fatalf("%d charts, want %d", len(got), len(want))
	}
	for _, c := range got {
		if c.script == "" {
			t.Errorf("%s: no script (%s)", c.name, c.missing)
			continue
		}
		for _, w := range want[c.name] {
			if !strings.Contains(c.script, w) {
				t.Errorf("%s: script lacks %q", c.name, w)
			}
		}
		if !strings.Contains(c.script, "bench/run of 2026-12-01 10:00 UTC (commit abc1234)") {
			t.Errorf("%s: title does not name the run", c.name)
		}
	}
}

func TestChartsOfAGroupThatDidNotRunAreSkipped(t *testing.T) {
	d := index([]Record{{Kind: kindRun, Params: map[string]string{"date": "today"}}})
	for _, c := range charts(d) {
		if c.script != "" || c.missing == "" {
			t.Errorf("%s: script %q, missing %q; want no script and a reason", c.name, c.script, c.missing)
		}
	}
}

func TestPanelDrawsAWhiskerOnlyWhereAsked(t *testing.T) {
	p := panel("1", "req/s", "t", false, []bar{
		{cluster: "a", series: "ramjet (cached)", value: 10, label: "10", whisker: true, lo: 8, hi: 12},
		{cluster: "a", series: "nginx static file", value: 9, label: "9"},
	})
	for _, want := range []string{
		"-0.2000\t10\t8\t12\t1\t10\t12\n", // whisker: lo, hi; the label sits on the whisker's top
		"0.2000\t9\t?\t?\t2\t9\t9\n",      // none: missing values
		"set yrange [0:13.8]",             // 12 × 1.15
		`lc rgb "#D9600B" title "ramjet (cached)"`,
		`lc rgb "#1A6FD8" title "nginx static file"`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("panel lacks %q:\n%s", want, p)
		}
	}
	if panel("1", "", "", false, nil) != "" {
		t.Error("a panel without bars is not empty")
	}
}

func TestColourFollowsTheContender(t *testing.T) {
	tests := []struct{ series, want string }{
		{"ramjet (cached)", "#D9600B"},
		{"ramjet, plain 30 KB page", "#F5A55B"},
		{"ramjet (cached), HTTP/1.1 (--h1)", "#F5A55B"},
		{"nginx fastcgi_cache", "#2E9E4F"},
		{"nginx + php-fpm (uncached, bypass cookie)", "#8DB6F5"},
		{"nginx + php-fpm", "#1A6FD8"},
		{"Varnish, ESI page (ESI on)", "#8E3FD6"},
		{"something else", "#888888"},
	}
	for _, tt := range tests {
		if got := colour(tt.series); got != tt.want {
			t.Errorf("colour(%q) = %s, want %s", tt.series, got, tt.want)
		}
	}
}

// TestARunWithoutChartsLeavesNoChartDirectory: a run of groups that have
// no chart (the capped group alone) makes no empty directory beside its
// results, and needs no gnuplot.
func TestARunWithoutChartsLeavesNoChartDirectory(t *testing.T) {
	d := index([]Record{{Kind: kindGroup, Group: "capped", Params: map[string]string{"cap_pct": "50"}}})
	dir := filepath.Join(t.TempDir(), "charts-capped")
	done, err := renderCharts(d, dir, func(string, ...any) {})
	if err != nil || len(done) != 0 {
		t.Fatalf("renderCharts = %v, %v; want none, nil", done, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s exists (stat: %v)", dir, err)
	}
}
