package main

import (
	"strings"
	"testing"
)

// TestWAFSectionComparesWithModSecurityAndChecksTheTargets: each row's
// contenders against nginx + ModSecurity, issue 16's targets judged on
// the medians, and the RSS rows.
func TestWAFSectionComparesWithModSecurityAndChecksTheTargets(t *testing.T) {
	row := func(workload, contender string, rps, cpu float64) Record {
		return Record{Kind: kindRow, Group: "waf", Round: 1, Workload: workload, Contender: contender, RPS: rps, CPU: cpu,
			Check: "ok", Params: map[string]string{"waf_evaluations": "3"}}
	}
	rows := []Record{
		{Kind: kindGroup, Group: "waf", Params: map[string]string{"page": "1024", "modsec": "3.0.9", "crs": "3.3.4"}},
		row("hit", "ramjet_waf", 60000, 15), row("hit", "ramjet_nowaf", 62000, 14), row("hit", "modsec", 1000, 700),
		row("nocache", "ramjet_waf_fwd", 3000, 300), row("nocache", "modsec", 1000, 700),
		row("post2k", "ramjet_waf_fwd", 500, 2000), row("post2k", "modsec", 800, 1200),
		{Kind: kindRow, Group: "waf", Round: 1, Workload: "rss", Contender: "ramjet_waf_sites_50", RSS: 60 * 1024, Params: map[string]string{"sites": "50"}},
	}
	got, err := wafSection(index(rows))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 1 KiB page, cached by ramjet | ramjet, WAF block | 60000 | 60.00× | 0.000 | 0.000 | 15.0 | 3 | 0 | ok |",
		"| cached page, WAF on, vs nginx + ModSecurity: ≥ 50× | 60.00× | yes |",
		"| cached page, WAF on, vs WAF off: ≥ 0.9× | 0.97× | yes |",
		"| 1 KiB page, uncacheable, vs nginx + ModSecurity: ≥ 1.0× | 3.00× | yes |",
		"| 2 KiB form POST to PHP, vs nginx + ModSecurity: ≥ 1.0× | 0.62× | no |",
		"| one rule set, shared | 50 | 60.0 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section has no %q:\n%s", want, got)
		}
	}
}
