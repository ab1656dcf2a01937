package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/RESULTS.golden.md from testdata/run.jsonl")

func fixture(t *testing.T) *runData {
	t.Helper()
	fh, err := os.Open("testdata/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	return index(recs)
}

// The whole report of a small run with every group: any change to a table
// shows here as a diff (go test ./bench/report -update rewrites it).
func TestReportOfTheFixtureRunMatchesTheGolden(t *testing.T) {
	got, err := report(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "RESULTS.golden.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("report differs from %s at line %d:\n got: %s\nwant: %s", golden, i+1, g, w)
			}
		}
	}
}

func TestReportNamesWhereRamjetLoses(t *testing.T) {
	got, err := report(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		// 725 B: ramjet 61.5k vs static 56.5k req/s, CPU 15.5 vs 17: no loss
		"| nginx static file | 1.09 | 1.00 | 0.91 | ≥ 1.0× req/s | yes | – |",
		// tail: ramjet slower than nginx static
		"| nginx static file | 0.91 | 1.08 | 1.07 | 1.00 | **req/s, p99, p99.9** |",
		// ab: ramjet 3000 vs 5000 req/s
		"**req/s, p99**",
		// idle: ramjet 17 KiB per connection against 0.5
		"**RSS held, peak RSS, growth**",
		// idle TLS + HTTP/2: held below nginx's, the peak above
		"| nginx static file | 0.93 | 1.33 | 0.88 | **peak RSS** |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report has no %q", want)
		}
	}
}

func TestReportShortensTheWorkDirAndDedupesConfigs(t *testing.T) {
	got, err := report(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "/tmp/ramjet-bench.FIX") {
		t.Error("the run's work dir is printed; want WORK")
	}
	if !strings.Contains(got, "root WORK/www;") {
		t.Error("config text lacks the shortened root")
	}
	if n := strings.Count(got, "<details><summary>nginx-static (nginx-static.conf)</summary>"); n != 1 {
		t.Errorf("nginx-static printed %d times, want once (same digest in two groups)", n)
	}
	if !strings.Contains(got, "| `nginx-static` | cache, tail |") {
		t.Error("the deduped config does not name both groups")
	}
}

func TestSpliceReplacesOnlyTheTextBetweenTheMarkers(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"markers kept, notes kept", "# t\n\n" + beginMark + "\nold\n" + endMark + "\n\nnotes\n",
			"# t\n\n" + beginMark + "\nnew\n" + endMark + "\n\nnotes\n"},
		{"no markers: appended", "# t\nnotes", "# t\nnotes\n\n" + beginMark + "\nnew\n" + endMark + "\n"},
		{"empty markers", beginMark + "\n" + endMark + "\n", beginMark + "\nnew\n" + endMark + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := splice(tt.doc, "new\n"); got != tt.want {
				t.Errorf("splice =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestWriteResultsMakesTheFileWhenMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "RESULTS.md")
	if err := writeResults(path, "body\n"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# ramjet benchmark results") || !strings.Contains(string(b), beginMark+"\nbody\n"+endMark) {
		t.Errorf("new file:\n%s", b)
	}
}

func TestWarningsNameFailedChecksOnce(t *testing.T) {
	d := index([]Record{
		{Kind: kindRow, Group: "cache", Workload: "725", Contender: "fcgi", Check: "HIT NOT CONFIRMED"},
		{Kind: kindRow, Group: "cache", Workload: "725", Contender: "fcgi", Check: "HIT NOT CONFIRMED"},
		{Kind: kindRow, Group: "cache", Workload: "725", Contender: "ramjet", Check: "hit"},
	})
	w := warnings(d)
	if len(w) != 1 || !strings.Contains(w[0], "fcgi") {
		t.Errorf("warnings %q, want one about fcgi", w)
	}
}
