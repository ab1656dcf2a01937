package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench/report:", err)
		if errors.Is(err, errNoGnuplot) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	records := fs.String("records", "", "the run's records (JSON Lines, written by bench/run)")
	out := fs.String("out", "", "results file whose text between the bench/run markers is replaced")
	chartDir := fs.String("charts", "", "directory for the PNG charts (gnuplot)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *records == "" || (*out == "" && *chartDir == "") {
		return errors.New("usage: report -records FILE [-out RESULTS.md] [-charts DIR]")
	}
	fh, err := os.Open(*records)
	if err != nil {
		return fmt.Errorf("open records: %w", err)
	}
	recs, err := Read(fh)
	fh.Close()
	if err != nil {
		return err
	}
	d := index(recs)
	for _, w := range warnings(d) {
		fmt.Fprintln(os.Stderr, "bench/report: WARNING:", w)
	}
	if *out != "" {
		body, err := report(d)
		if err != nil {
			return err
		}
		if err := writeResults(*out, body); err != nil {
			return err
		}
	}
	if *chartDir != "" {
		logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench/report: "+format+"\n", a...) }
		done, err := renderCharts(d, *chartDir, logf)
		logf("%d chart(s) in %s: %s", len(done), *chartDir, strings.Join(done, " "))
		return err
	}
	return nil
}

// warnings names every row whose check failed: such a row does not measure
// what its table says (a miss, another body, a failed status).
func warnings(d *runData) []string {
	var out []string
	for _, g := range []string{"cache", "tail", "idle", "accesslog", "waf", "disk", "capped", "warm", "h2", "php", "phptools", "wp"} {
		bad := map[string]bool{}
		for _, r := range d.rows[g] {
			switch r.Check {
			case "ok", "hit", "n/a", "":
			default:
				k := r.Workload + " " + r.Contender + ": " + r.Check
				if !bad[k] {
					bad[k] = true
					out = append(out, g+" "+k)
				}
			}
		}
	}
	return out
}
