package manual

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// repo is the repository's top directory, from this package's.
const repo = "../.."

// TestGeneratedFilesAreUpToDate fails when a man page or the
// configuration page's key list is not what go generate makes from
// their sources: after an edit of docs/man/*.md or the example config,
// run go generate ./internal/manual.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	files, err := Generate(repo)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(repo, path))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is not what its sources make: run go generate ./internal/manual", path)
		}
	}
}

// TestManPagesRenderWithoutWarnings runs groff, as man does, with every
// warning on.
func TestManPagesRenderWithoutWarnings(t *testing.T) {
	if _, err := exec.LookPath("groff"); err != nil {
		testbed.Skip(t, "no groff (Debian's groff-base, which man-db needs)")
	}
	for _, page := range ManPages {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", filepath.Join(repo, "docs/man", page))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff %s: %v\n%s", page, err, stderr.String())
		}
	}
}

// documented reports whether the schema key is named in text, as
// written (`key`, or as roff bold): a host's key may be named as the
// defaults key it overrides.
func documented(text, key string, quote func(string) string) bool {
	if strings.Contains(text, quote(key)) {
		return true
	}
	rest, ok := strings.CutPrefix(key, "hosts[].")
	return ok && strings.Contains(text, quote("defaults."+rest))
}

func TestEveryConfigKeyIsInTheManPageAndTheReference(t *testing.T) {
	man := readRepo(t, "docs/man/ramjet.yaml.5")
	ref := readRepo(t, ConfigPage)
	for _, key := range conf.Keys() {
		if !documented(man, key, func(k string) string { return `\fB` + escape(k) + `\fR` }) {
			t.Errorf("ramjet.yaml(5) does not name key %s", key)
		}
		if !documented(ref, key, func(k string) string { return "`" + k + "`" }) {
			t.Errorf("%s does not name key %s", ConfigPage, key)
		}
	}
}

// keyLike is a code span that reads as a key path: dotted, lower case.
var keyLike = regexp.MustCompile("`([a-z][a-z0-9_]*(?:\\[\\])?(?:\\.[a-z0-9_*]+(?:\\[\\])?)+)`")

// TestEveryKeyTheDocsNameExists: a dotted key path in a code span of
// README.md, docs/ or a man page's source is a key of the schema (or a
// defaults key written without "defaults.", or a pattern with "*").
func TestEveryKeyTheDocsNameExists(t *testing.T) {
	keys := conf.Keys()
	tops := map[string]bool{}
	for _, k := range keys {
		tops[strings.Split(k, ".")[0]] = true
		if rest, ok := strings.CutPrefix(k, "defaults."); ok {
			tops[strings.Split(rest, ".")[0]] = true
		}
	}
	for _, page := range docPages(t) {
		for _, m := range keyLike.FindAllStringSubmatch(Prose(readRepo(t, page)), -1) {
			name := m[1]
			if !tops[strings.TrimSuffix(strings.Split(name, ".")[0], "[]")] || fileName.MatchString(name) {
				continue // a file or host name, not a key
			}
			if !keyExists(keys, name) {
				t.Errorf("%s names key %s, which the schema does not have", page, name)
			}
		}
	}
}

// fileName is a source file's name ("crawler.go") that reads as a key.
var fileName = regexp.MustCompile(`\.(go|md|conf|yaml|php)$`)

// keyExists: name is a schema key, or a defaults key written without
// "defaults.", or a "*" pattern some key matches.
func keyExists(keys []string, name string) bool {
	for _, candidate := range []string{name, "defaults." + name} {
		if prefix, ok := strings.CutSuffix(candidate, "*"); ok {
			if slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, prefix) }) {
				return true
			}
		} else if slices.Contains(keys, candidate) {
			return true
		}
	}
	return false
}

// TestDocsLinksResolve: every relative link of README.md and docs/
// names a file or directory that exists and, into a Markdown page, one
// of its headings.
func TestDocsLinksResolve(t *testing.T) {
	pages := docPages(t)
	for _, page := range pages {
		text := readRepo(t, page)
		for _, l := range Links(text) {
			target, frag, _ := strings.Cut(l.Target, "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file := filepath.Join(filepath.Dir(page), target)
			anchors := Anchors(text)
			if target != "" {
				if _, err := os.Stat(filepath.Join(repo, file)); err != nil {
					t.Errorf("%s:%d: link %s: no %s", page, l.Line, l.Target, file)
					continue
				}
				if !strings.HasSuffix(target, ".md") {
					continue
				}
				anchors = Anchors(readRepo(t, file))
			}
			if frag != "" && !anchors[frag] {
				t.Errorf("%s:%d: link %s: %s has no heading #%s", page, l.Line, l.Target, file, frag)
			}
		}
	}
}

// TestReadmeTestCommandIsWhatCIRuns: README's quickstart names the two
// commands, make run and make test; the Makefile has both targets, and
// .ci/run runs the test command exactly.
func TestReadmeTestCommandIsWhatCIRuns(t *testing.T) {
	var commands []string
	for _, b := range Blocks(readRepo(t, "README.md")) {
		for _, line := range strings.Split(b.Body, "\n") {
			if cmd, _, _ := strings.Cut(line, "#"); strings.HasPrefix(cmd, "make ") && len(commands) < 2 {
				commands = append(commands, strings.TrimSpace(cmd))
			}
		}
	}
	if !slices.Equal(commands, []string{"make run", "make test"}) {
		t.Fatalf("README's first commands are %q, want make run and make test", commands)
	}
	makefile := readRepo(t, "Makefile")
	for _, target := range []string{"run:", "test:"} {
		if !regexp.MustCompile(`(?m)^` + target).MatchString(makefile) {
			t.Errorf("the Makefile has no %s target", target)
		}
	}
	ci := strings.Split(strings.TrimSpace(readRepo(t, ".ci/run")), "\n")
	if last := ci[len(ci)-1]; last != commands[1] {
		t.Errorf(".ci/run ends with %q, README's test command is %q", last, commands[1])
	}
}

// docPages are README.md and every Markdown page under docs/.
func docPages(t *testing.T) []string {
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repo, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repo, p)
			pages = append(pages, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

func readRepo(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestReadmeStaysAFrontDoor: README.md is what ramjet is, the two
// commands, the first steps and a map; a feature's documentation goes
// to its page under docs/.
func TestReadmeStaysAFrontDoor(t *testing.T) {
	const most = 250
	if n := strings.Count(readRepo(t, "README.md"), "\n"); n > most {
		t.Errorf("README.md has %d lines, more than %d: move what a feature's users need to its page under docs/ (the map in README names them)", n, most)
	}
}

// metricRow is a row of operations.md's metrics index: the page, the
// metrics it explains.
var metricRow = regexp.MustCompile(`(?m)^\| (?:\[[^\]]+\]\(([^)#]+)[^)]*\)|this page) \| (.*ramjet_.*) \|$`)

// TestMetricsIndexNamesWhatEachPageExplains: each metric (or family,
// "ramjet_disk_*") the operations page's index sends a reader to is
// named on that page.
func TestMetricsIndexNamesWhatEachPageExplains(t *testing.T) {
	const index = "docs/operations.md"
	rows := metricRow.FindAllStringSubmatch(readRepo(t, index), -1)
	if len(rows) < 5 {
		t.Fatalf("%s: found %d rows of the metrics index", index, len(rows))
	}
	for _, row := range rows {
		page := index
		if row[1] != "" {
			page = filepath.Join("docs", row[1])
		}
		text := strings.Replace(readRepo(t, page), row[0], "", 1) // not the index itself
		for _, m := range regexp.MustCompile("`(ramjet_[a-z0-9_]*)[^`]*`").FindAllStringSubmatch(row[2], -1) {
			if !strings.Contains(text, m[1]) {
				t.Errorf("%s sends %s to %s, which does not name it", index, m[1], page)
			}
		}
	}
}
