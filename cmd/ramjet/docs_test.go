package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/internal/manual"
)

// TestDocsYAMLBlocksPassCheck: every YAML block of README.md and docs/
// passes ramjet check as a whole file, the files it names made up in a
// sandbox when this machine has none (a site's docroot, a token file,
// certificates); a block marked "yaml fragment" (a part of a section,
// shown for its keys) must parse and name only keys of the schema.
func TestDocsYAMLBlocksPassCheck(t *testing.T) {
	for _, page := range docPages(t) {
		for _, b := range manual.Blocks(readDoc(t, page)) {
			if b.Lang() != "yaml" {
				continue
			}
			where := page + ":" + strconv.Itoa(b.Line)
			if strings.Contains(b.Info, "fragment") {
				checkFragment(t, where, b.Body)
				continue
			}
			body := sandboxPaths(t, b.Body)
			file := filepath.Join(t.TempDir(), "ramjet.yaml")
			if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errs bytes.Buffer
			if code := check([]string{"--config", file}, &out, &errs); code != 0 {
				t.Errorf("%s: ramjet check: %s", where, strings.ReplaceAll(errs.String(), file, "block"))
			}
		}
	}
}

// checkFragment: the YAML parses and every key in it is the schema's
// (a defaults key may stand at the top, as the fragment's context).
func checkFragment(t *testing.T, where, body string) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(body), &doc); err != nil || len(doc.Content) == 0 {
		t.Errorf("%s: fragment does not parse: %v", where, err)
		return
	}
	keys := conf.Keys()
	walkYAML(doc.Content[0], "", func(path string, _ *yaml.Node) {
		if !slices.Contains(keys, path) && !slices.Contains(keys, "defaults."+path) {
			t.Errorf("%s: fragment names %s, which is no key", where, path)
		}
	})
}

// sandboxPaths points every absolute path of body that does not exist
// here at a file or directory made for it under a temporary directory:
// a directory for a docroot, htaccess_root or the disk tier, a file
// for anything else (holding a token, or a comment for WAF rules).
func sandboxPaths(t *testing.T, body string) string {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(body), &doc); err != nil || len(doc.Content) == 0 {
		return body // ramjet check reports it
	}
	sandbox := t.TempDir()
	walkYAML(doc.Content[0], "", func(path string, v *yaml.Node) {
		values := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			values = v.Content
		}
		for _, n := range values {
			if n.Kind != yaml.ScalarNode || !strings.HasPrefix(n.Value, "/") {
				continue
			}
			if _, err := os.Stat(n.Value); err == nil {
				continue
			}
			made := filepath.Join(sandbox, n.Value)
			makePath(t, made, path)
			body = strings.ReplaceAll(body, n.Value, made)
		}
	})
	return body
}

func makePath(t *testing.T, path, key string) {
	last := key[strings.LastIndexByte(key, '.')+1:]
	if last == "root" || last == "htaccess_root" || strings.HasSuffix(key, "disk.path") {
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	content := "a-token-for-the-docs-test\n"
	if last == "rules" { // a WAF rule file: none, but it compiles
		content = "# made by the docs test\n"
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// walkYAML calls f with each key's path (list items "[]") and value.
func walkYAML(n *yaml.Node, path string, f func(string, *yaml.Node)) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			kp := n.Content[i].Value
			if path != "" {
				kp = path + "." + kp
			}
			f(kp, n.Content[i+1])
			walkYAML(n.Content[i+1], kp, f)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			walkYAML(item, path+"[]", f)
		}
	}
}

// docPages are README.md and the pages under docs/, relative to the
// repository.
func docPages(t *testing.T) []string {
	matches, err := filepath.Glob("../../docs/*.md")
	man, _ := filepath.Glob("../../docs/man/*.md")
	matches = append(matches, man...)
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{"README.md"}
	for _, m := range matches {
		pages = append(pages, strings.TrimPrefix(m, "../../"))
	}
	return pages
}

func readDoc(t *testing.T, page string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../..", page))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestDocsCommandLinesParse: every ramjet command line in a code block
// of README.md and docs/ parses as the command would parse it (nothing
// runs); a synopsis ("[--flag]", "A|B", "T...") and a command in running
// text may leave values out, but every flag they name must exist.
func TestDocsCommandLinesParse(t *testing.T) {
	seen := 0
	for _, page := range docPages(t) {
		text := readDoc(t, page)
		for _, b := range manual.Blocks(text) {
			switch b.Lang() {
			case "yaml", "nginx", "apache", "json":
				continue
			}
			var last []string // the command a synopsis' indented "[..." line goes on with
			for i, line := range strings.Split(strings.ReplaceAll(b.Body, "\\\n", " "), "\n") {
				if last != nil && strings.HasPrefix(strings.TrimSpace(line), "[") && strings.HasPrefix(line, " ") {
					checkFlagsExist(t, fmt.Sprintf("%s:%d", page, b.Line+i), append(commandWords(last), shellWords(line, true)...))
					continue
				}
				last = nil
				for _, args := range commandLines(line) {
					last = args
					seen++
					where := fmt.Sprintf("%s:%d: %s", page, b.Line+i, strings.Join(args, " "))
					if isSynopsis(args) {
						checkFlagsExist(t, where, args)
					} else if err := parseCommandLine(args); err != nil {
						t.Errorf("%s: %v", where, err)
					}
				}
			}
		}
		for _, span := range codeSpan.FindAllStringSubmatch(manual.Prose(text), -1) {
			for _, args := range commandLines(span[1]) {
				seen++
				checkFlagsExist(t, page+": `"+span[1]+"`", args)
			}
		}
	}
	if seen < 20 {
		t.Errorf("found %d ramjet command lines in the docs; the reader of them is broken", seen)
	}
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// ramjetWord is where a ramjet command starts: the line's first word
	// (after sudo or a prompt), after a shell operator, or followed by a
	// command's name.
	ramjetWord = regexp.MustCompile(`(?:^|[;&|(]\s*|\s)(?:sudo\s+|\$\s+)?(?:/usr/bin/)?ramjet\s+([a-z][a-z-]*)`)
	commands   = []string{"serve", "check", "purge", "reopen-logs", "wp", "top", "adopt", "version"}
)

// commandLines returns the ramjet command lines in one line of shell:
// each from "ramjet" to the end of its command (an operator, a
// comment), as words.
func commandLines(line string) [][]string {
	var out [][]string
	for _, m := range ramjetWord.FindAllStringSubmatchIndex(line, -1) {
		start := m[2]
		name := line[m[2]:m[3]]
		atStart := strings.TrimSpace(line[:m[0]]) == "" || strings.ContainsAny(line[m[0]:m[0]+1], ";&|(")
		if !atStart && !slices.Contains(commands, name) || strings.HasSuffix(strings.TrimSpace(line[:m[0]+1]), "wp") {
			continue // "systemctl reload ramjet", "chgrp ramjet FILE", WP-CLI's "wp ramjet purge"
		}
		rest := line[start:]
		out = append(out, shellWords(rest, strings.ContainsAny(rest, "[…") || strings.Contains(rest, "...")))
	}
	return out
}

// shellWords splits a command into words, quotes removed, up to the
// first operator or comment; in a synopsis "|", "(" and ")" are words.
func shellWords(s string, synopsis bool) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.IndexByte(";&<>`", c) >= 0 || (!synopsis && strings.IndexByte("|)", c) >= 0) || (c == '#' && !inWord):
			i = len(s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// hasSubcommand: the command's first word picks what follows (wp scan,
// adopt nginx, adopt --rollback).
func hasSubcommand(cmd string) bool { return cmd == "wp" || cmd == "adopt" }

// commandWords are the words of args naming its command (and
// subcommand), which a synopsis' next line goes on with.
func commandWords(args []string) []string {
	if hasSubcommand(args[0]) && len(args) > 1 {
		return args[:2:2]
	}
	return args[:1:1]
}

// isSynopsis: the line shows a command's form, not one to run.
func isSynopsis(args []string) bool {
	for _, a := range args {
		if strings.ContainsAny(a, "[]|()") || strings.Contains(a, "...") || strings.Contains(a, "…") {
			return true
		}
	}
	return false
}

// checkFlagsExist fails for each flag the words name that the command
// (for wp, each subcommand named) does not define.
func checkFlagsExist(t *testing.T, where string, args []string) {
	t.Helper()
	if len(args) == 0 {
		return
	}
	cmd := args[:1]
	rest := args[1:]
	subs := []string{""}
	if hasSubcommand(args[0]) && len(args) > 1 {
		subs = strings.Split(strings.Trim(args[1], "()"), "|")
		rest = args[2:]
	}
	for _, sub := range subs {
		if sub != "" {
			cmd = []string{args[0], strings.TrimSpace(sub)}
		}
		for _, a := range rest {
			flag, _, _ := strings.Cut(strings.Trim(a, "[]()|.…"), "=")
			if !strings.HasPrefix(flag, "-") || flag == "-" {
				continue
			}
			err := parseCommandLine(append(slices.Clone(cmd), flag, "x"))
			if err != nil && strings.Contains(err.Error(), "not defined") {
				t.Errorf("%s: %s %s has no flag %s", where, "ramjet", strings.Join(cmd, " "), flag)
			}
		}
	}
}

// parseCommandLine parses args (after "ramjet") as the command does,
// running nothing; the error is what the command would print.
func parseCommandLine(args []string) error {
	_, err := parseCommandLineOutput(args)
	return err
}

// parseCommandLineOutput is parseCommandLine with what the command
// printed (its flags' help for -h).
func parseCommandLineOutput(args []string) (string, error) {
	var stderr bytes.Buffer
	var err error
	switch args[0] {
	case "serve":
		err = (&daemon{}).parseFlags(args[1:], &stderr)
	case "check":
		_, _, err = parseCheck(args[1:], &stderr)
	case "purge":
		_, _, err = parsePurge(args[1:], &stderr)
	case "reopen-logs":
		_, err = parseReopenLogs(args[1:], &stderr)
	case "wp":
		_, err = parseWP(args[1:], &stderr)
	case "top":
		_, err = parseTop(args[1:], &stderr)
	case "adopt":
		switch sub := strings.Join(args[1:min(2, len(args))], ""); sub {
		case "nginx", "apache":
			_, err = parseAdopt(sub, args[2:], &stderr)
		case "--rollback", "-rollback":
			_, _, err = parseAdoptRollback(args[2:], &stderr)
		default:
			return "", fmt.Errorf("ramjet adopt: %q is neither nginx, apache nor --rollback", sub)
		}
	case "version":
		return "", nil
	default:
		return "", fmt.Errorf("ramjet has no command %q", args[0])
	}
	if err != nil {
		return stderr.String(), errors.New(strings.TrimSpace(strings.Split(stderr.String(), "\n")[0]) + " (" + err.Error() + ")")
	}
	return stderr.String(), nil
}

// TestEveryFlagIsInTheManPage: each flag a command defines (as its -h
// lists them) is named in ramjet(8).
func TestEveryFlagIsInTheManPage(t *testing.T) {
	man := readDoc(t, "docs/man/ramjet.8.md")
	for _, cmd := range [][]string{{"serve"}, {"check"}, {"purge"}, {"reopen-logs"}, {"wp", "scan"}, {"wp", "enable"}, {"wp", "disable"}, {"top"},
		{"adopt", "nginx"}, {"adopt", "apache"}, {"adopt", "--rollback"}} {
		help, _ := parseCommandLineOutput(append(slices.Clone(cmd), "-h"))
		flags := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(help, -1)
		if len(flags) == 0 {
			t.Errorf("ramjet %s -h listed no flags:\n%s", strings.Join(cmd, " "), help)
		}
		for _, f := range flags {
			if !strings.Contains(man, "`--"+f[1]) && !strings.Contains(man, "`-"+f[1]+"`") && !strings.Contains(man, "`-"+f[1]+" ") {
				t.Errorf("ramjet(8) does not name ramjet %s's flag --%s", strings.Join(cmd, " "), f[1])
			}
		}
	}
}

// TestEveryCommandIsDocumented: each command the usage names has its
// entry in ramjet(8) and its line in the operations page's synopsis.
func TestEveryCommandIsDocumented(t *testing.T) {
	man := readDoc(t, "docs/man/ramjet.8.md")
	ops := readDoc(t, "docs/operations.md")
	names := regexp.MustCompile(`(?m)^\s+ramjet ([a-z-]+)`).FindAllStringSubmatch(usage, -1)
	if len(names) < 5 {
		t.Fatalf("found %d commands in the usage", len(names))
	}
	for _, m := range names {
		if !strings.Contains(man, "\n`"+m[1]+"`") && !strings.Contains(man, "\n`"+m[1]+" ") {
			t.Errorf("ramjet(8) (docs/man/ramjet.8.md) has no entry for ramjet %s", m[1])
		}
		if !strings.Contains(ops, "\nramjet "+m[1]+" ") && !strings.Contains(ops, "\nramjet "+m[1]+"\n") {
			t.Errorf("docs/operations.md's synopsis has no line for ramjet %s", m[1])
		}
	}
}
