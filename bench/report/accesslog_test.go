package main

import (
	"strings"
	"testing"
)

// TestAccessLogSectionComparesEachFormatWithOff: each format's req/s and
// CPU against the log off of the same run, and issue 15's target.
func TestAccessLogSectionComparesEachFormatWithOff(t *testing.T) {
	got, err := accesslogSection(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| ramjet, access log combined | 56500 | 56000–57000 | 0.934 | 0.800 | 1.900 | 16.10 | 1.081 | 29.3 | 566000 | 0 | 0 | hit |",
		"| combined | 0.934 | ≥ 0.90 (≤ 10 % fewer req/s) | yes |",
		"| json | 0.868 | ≥ 0.90 (≤ 10 % fewer req/s) | no |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section has no %q:\n%s", want, got)
		}
	}
}

func TestAccessLogSectionOfASkippedGroupSaysWhy(t *testing.T) {
	d := index([]Record{{Kind: kindGroup, Group: "accesslog", Params: map[string]string{"skip": "BENCH_SKIP_RAMJET=1"}}})
	got, err := accesslogSection(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "_skipped: BENCH_SKIP_RAMJET=1._") || strings.Contains(got, "| server |") {
		t.Errorf("skipped section:\n%s", got)
	}
}
