package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// errNoGnuplot: charts need gnuplot (Debian: gnuplot-nox).
var errNoGnuplot = errors.New("gnuplot not found (apt-get install gnuplot-nox)")

const preamble = `set datafile separator "\t"
set datafile missing "?"
set style fill solid 0.9 border rgb "#404040"
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set xtics scale 0
set key outside top center horizontal samplen 1.5
set bmargin 4
set format y "%.0f"
`

// renderCharts writes every chart of the run into dir as PNG. A chart
// whose rows are missing is skipped, and its old PNG removed so the
// directory never shows another run's numbers. gnuplot is looked for, and
// dir made, only for a chart to draw: a run of groups without charts
// needs neither and leaves no empty directory. It returns the names written.
func renderCharts(d *runData, dir string, logf func(string, ...any)) ([]string, error) {
	var done []string
	var failed []error
	var gp, term string
	for _, c := range charts(d) {
		out := filepath.Join(dir, c.name)
		if c.script == "" {
			logf("skipped %s: %s", c.name, c.missing)
			if err := os.Remove(out); err == nil {
				logf("removed the old %s (it would show numbers this run does not have)", out)
			}
			continue
		}
		if gp == "" {
			var err error
			if gp, term, err = gnuplot(dir); err != nil {
				return done, err
			}
		}
		if err := plot(gp, term, c, out); err != nil {
			failed = append(failed, err)
			continue
		}
		done = append(done, c.name)
	}
	return done, errors.Join(failed...)
}

// gnuplot finds gnuplot and its best PNG terminal, and makes dir.
func gnuplot(dir string) (path, term string, err error) {
	path, err = exec.LookPath("gnuplot")
	if err != nil {
		return "", "", errNoGnuplot
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("report: charts: %w", err)
	}
	term = "pngcairo"
	if exec.Command(path, "-e", "set terminal pngcairo").Run() != nil {
		term = "png"
	}
	return path, term, nil
}

// plot runs gnuplot on one chart into a temporary file, then renames it
// over out, so a failed plot leaves the old PNG whole.
func plot(gp, term string, c chart, out string) error {
	tmp := out + ".tmp"
	script := fmt.Sprintf("set terminal %s noenhanced size %d,%d font \"DejaVu Sans,10\"\nset output %s\n%s%s\nunset multiplot\n",
		term, c.width, c.height, q(tmp), preamble, c.script)
	cmd := exec.Command(gp)
	cmd.Stdin = strings.NewReader(script)
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report: gnuplot on %s: %w: %s", c.name, err, msg)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
