package main

import (
	"strings"
	"testing"
)

func cappedRow(round int, contender string, rps, cpu, load float64, throttledPct string) Record {
	return Record{Kind: kindRow, Group: "capped", Round: round, Workload: "30k", Contender: contender, RPS: rps, CPU: cpu,
		ServerBusy: 50, LoadBusy: load, Check: "hit", Params: map[string]string{"throttled_pct": throttledPct, "cap_pct": "50"}}
}

// TestCappedSectionJudgesThe30KBTargetWhereTheServerIsTheLimit: medians
// side by side, ratios to fastcgi_cache, and the target met only with
// wrk below its ceiling.
func TestCappedSectionJudgesThe30KBTargetWhereTheServerIsTheLimit(t *testing.T) {
	rows := []Record{
		{Kind: kindGroup, Group: "capped", Params: map[string]string{"cap_pct": "50", "period_us": "10000", "cgroup": "v1", "page": "30k"}},
		cappedRow(1, "ramjet", 39000, 12.5, 60, "99.0"), cappedRow(1, "fcgi", 32000, 15.5, 55, "99.5"),
		cappedRow(2, "fcgi", 33000, 15.0, 56, "99.1"), cappedRow(2, "ramjet", 40000, 12.2, 61, "98.7"),
	}
	got, err := cappedSection(index(rows))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"held to 50 % of its core",
		"| ramjet (cached, disk tier on) | 39500 | 39000–40000 | 1.22× | 0.000 | 0.000 | 12.35 | 0.81× | 50 | 98.8 | 60 | 0 | hit |",
		"| nginx fastcgi_cache | 32500 | 32000–33000 | – |",
		"| 30 KB hit: ≥ 1.1× fastcgi_cache req/s | 1.22× | yes |",
		"| 30 KB hit: CPU per request ≤ fastcgi_cache's | 0.81× | yes |",
		"| wrk below its ceiling: its core < 90 % busy in every row | 61 % | yes |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section has no %q:\n%s", want, got)
		}
	}
}

// TestCappedSectionSaysWhenWrkWasTheLimitAfterAll: a row with wrk's core
// full does not measure the server, and the table says so.
func TestCappedSectionSaysWhenWrkWasTheLimitAfterAll(t *testing.T) {
	rows := []Record{
		{Kind: kindGroup, Group: "capped", Params: map[string]string{"cap_pct": "90"}},
		cappedRow(1, "ramjet", 80000, 11.5, 99, "20.0"), cappedRow(1, "fcgi", 70000, 13.5, 97, "95.0"),
	}
	got, err := cappedSection(index(rows))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| wrk below its ceiling: its core < 90 % busy in every row | 99 % | no |"; !strings.Contains(got, want) {
		t.Errorf("section has no %q:\n%s", want, got)
	}
}

func TestCappedSectionOfASkippedGroupSaysWhy(t *testing.T) {
	d := index([]Record{{Kind: kindGroup, Group: "capped", Params: map[string]string{"skip": "no cgroup with a CPU quota could be made here (needs root)"}}})
	got, err := cappedSection(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "_skipped: no cgroup with a CPU quota could be made here (needs root)._") || strings.Contains(got, "| server |") {
		t.Errorf("skipped section:\n%s", got)
	}
}
