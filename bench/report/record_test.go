package main

import (
	"strings"
	"testing"
)

func TestReadKeepsNumbersAndStringsOfARow(t *testing.T) {
	in := `{"kind":"row","group":"cache","round":2,"workload":"725","contender":"ramjet","rps":1000.5,"php_calls":0,"check":"hit","cmd":"wrk -t1"}` + "\n\n" +
		`{"kind":"run","date":"2026-01-01 00:00 UTC","rounds":"3"}` + "\n"
	recs, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2 (blank lines skipped)", len(recs))
	}
	r := recs[0]
	if r.Round != 2 || r.RPS != 1000.5 || r.Check != "hit" || r.PHPCalls == nil || *r.PHPCalls != 0 {
		t.Errorf("row decoded as %+v", r)
	}
	if r.param("cmd") != "wrk -t1" || r.param("round") != "2" {
		t.Errorf("params %v", r.Params)
	}
	if recs[1].param("date") != "2026-01-01 00:00 UTC" {
		t.Errorf("run params %v", recs[1].Params)
	}
}

func TestReadTakesANullCountAsUnknown(t *testing.T) {
	recs, err := Read(strings.NewReader(`{"kind":"row","php_calls":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].PHPCalls != nil {
		t.Errorf("php_calls null decoded as %v, want nil", *recs[0].PHPCalls)
	}
}

func TestReadNamesTheLineOfABadRecord(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not JSON", "{\"kind\":\"row\"}\nnot json\n", "line 2"},
		{"no kind", `{"group":"cache"}`, "no \"kind\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
