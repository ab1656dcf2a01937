package main

import (
	"strings"
	"testing"
)

// TestDiskSectionShowsTheRowsAndJudgesIssue29sTargets: the ws4x rows side
// by side against fastcgi_cache, the upgrade and start rows, and the
// targets judged on them.
func TestDiskSectionShowsTheRowsAndJudgesIssue29sTargets(t *testing.T) {
	ws := func(contender string, rps, cpu float64, hits string) Record {
		return Record{Kind: kindRow, Group: "disk", Round: 1, Workload: "ws4x", Contender: contender, RPS: rps, CPU: cpu,
			Check: "ok", Params: map[string]string{"disk_hits": hits, "php_calls": "0"}}
	}
	rows := []Record{
		{Kind: kindGroup, Group: "disk", Params: map[string]string{"pages": "2000", "start_mb": "64"}},
		ws("ramjet_disk", 5705, 44.5, "41000"), ws("fcgi", 11397, 14.3, ""),
		{Kind: kindRow, Group: "disk", Round: 1, Workload: "upgrade", Contender: "ramjet_disk", RPS: 6000, Errors: 3, Check: "errors 3, handed over: yes",
			Params: map[string]string{"requests": "60000", "origin_fetches": "4", "pages": "2000", "origin_pct": "0.20", "handed_over": "yes"}},
		{Kind: kindRow, Group: "disk", Round: 1, Workload: "start", Contender: "ramjet_disk", Check: "ok",
			Params: map[string]string{"first_hit_s": "0.35", "loaded_objects": "480", "disk_bytes": "67108864"}},
	}
	got, err := diskSection(index(rows))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2000 pages of 30 KB",
		"| ramjet, disk tier on | 5705 | 0.50× | 0.000 | 0.000 | 44.5 | 41000 | 0 | 0 | ok |",
		"| nginx fastcgi_cache | 11397 | – | 0.000 | 0.000 | 14.3 | – | 0 | 0 | ok |",
		"| ramjet, disk tier on | 6000 | 60000 | 3 | 4 of 2000 (0.20 %) | yes | **errors 3, handed over: yes** |",
		"| ramjet, disk tier on | 64.0 | 0.35 | 480 | ok |",
		"| working set 4× RAM, vs fastcgi_cache: ≥ 0.8× | 0.50× | no |",
		"| upgrade under load: 0 errors | 3 | no |",
		"| upgrade under load: ≤ 1 % of the pages from the origin | 0.20 % | yes |",
		"| first hit after a start: ≤ 2 s | 0.35 s | yes |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section has no %q:\n%s", want, got)
		}
	}
}
