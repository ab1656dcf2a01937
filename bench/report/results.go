package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

const (
	beginMark = "<!-- bench/run:begin -->"
	endMark   = "<!-- bench/run:end -->"
)

// report renders everything between the markers: the run, the configs,
// then each group that ran, in bench/run's order.
func report(d *runData) (string, error) {
	head, err := render("run.tmpl", d, nil, nil)
	if err != nil {
		return "", err
	}
	parts := []string{head, configsSection(d), cacheSection(d)}
	for _, section := range []func(*runData) (string, error){tailSection, idleSection, accesslogSection, diskSection, cappedSection, wafSection, warmSection, h2Section, phpSection, phptoolsSection, wpSection} {
		s, err := section(d)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	return tidy(strings.Join(parts, "")), nil
}

var blankRuns = regexp.MustCompile(`\n{3,}`)

// tidy leaves at most one blank line between blocks and one newline at the end.
func tidy(s string) string {
	return strings.TrimRight(blankRuns.ReplaceAllString(s, "\n\n"), "\n") + "\n"
}

// splice puts body between the markers of doc, or appends the markers when
// doc has none; the text outside them is kept.
func splice(doc, body string) string {
	b := strings.Index(doc, beginMark+"\n")
	e := strings.Index(doc, "\n"+endMark)
	if b < 0 || e < b {
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return doc + "\n" + beginMark + "\n" + body + endMark + "\n"
	}
	return doc[:b+len(beginMark)+1] + body + doc[e+1:]
}

const newResults = "# ramjet benchmark results\n\nWritten by `bench/run` (see bench/README.md for what is measured and how to " +
	"read it). Everything\nbetween the markers below is replaced by each run; notes outside the markers are kept.\n"

// writeResults splices body into the file at path (made when missing),
// writing in place so that its mode and owner stay.
func writeResults(path, body string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("report: read %s: %w", path, err)
	}
	if len(old) == 0 {
		old = []byte(newResults)
	}
	out := splice(string(old), body)
	if bytes.Equal([]byte(out), old) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}
