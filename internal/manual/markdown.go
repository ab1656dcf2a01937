package manual

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Block is one fenced code block of a Markdown page.
type Block struct {
	Info string // the fence's info string: "yaml", "sh", "yaml fragment", ...
	Line int    // 1-based line of its first content line
	Body string // its lines, each ending in "\n"
}

// Lang is the block's language: the info string's first word.
func (b Block) Lang() string {
	lang, _, _ := strings.Cut(b.Info, " ")
	return lang
}

// Blocks returns the fenced code blocks of md (``` or ~~~ fences, as
// CommonMark closes them: the same character, at least as long).
func Blocks(md string) []Block {
	var out []Block
	var cur *Block
	var fence string
	indent := 0 // the opening fence's, which its lines lose
	for i, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if cur == nil {
			if f := fenceOf(trimmed); f != "" {
				cur = &Block{Info: strings.TrimSpace(trimmed[len(f):]), Line: i + 2}
				fence, indent = f, len(line)-len(trimmed)
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" && strings.HasPrefix(f, fence) && strings.TrimSpace(trimmed[len(f):]) == "" {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cur.Body += dedent(line, indent) + "\n"
	}
	return out
}

// dedent removes up to n leading spaces from line: a block in a list
// item is indented with it, and its lines keep only their own indent.
func dedent(line string, n int) string {
	for i := 0; i < n && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}

// fenceOf returns the run of ` or ~ (at least three) line starts with.
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// Prose is md with its fenced blocks blanked (their lines left empty, so
// line numbers hold): the text links and headings are read from.
func Prose(md string) string {
	lines := strings.Split(md, "\n")
	in, fence := false, ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		f := fenceOf(trimmed)
		switch {
		case !in && f != "":
			in, fence = true, f
			lines[i] = ""
		case in && f != "" && strings.HasPrefix(f, fence) && strings.TrimSpace(trimmed[len(f):]) == "":
			in = false
			lines[i] = ""
		case in:
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// Link is one inline link [text](target) of a page's prose.
type Link struct {
	Line   int
	Target string
}

var (
	linkRE = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	codeRE = regexp.MustCompile("`[^`]*`")
)

// Links returns the inline link targets of md's prose (not of code).
func Links(md string) []Link {
	var out []Link
	for i, line := range strings.Split(Prose(md), "\n") {
		line = codeRE.ReplaceAllString(line, "``")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			out = append(out, Link{Line: i + 1, Target: m[1]})
		}
	}
	return out
}

// Anchors returns the fragment identifiers GitHub gives md's headings:
// lower case, spaces to hyphens, punctuation but hyphens and
// underscores dropped, a repeated one suffixed -1, -2, ...
func Anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(Prose(md), "\n") {
		text, ok := headingText(line)
		if !ok {
			continue
		}
		a := Slug(text)
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// headingText is the text of an ATX heading line ("## Text").
func headingText(line string) (string, bool) {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || !strings.HasPrefix(line[n:], " ") {
		return "", false
	}
	return strings.TrimSpace(line[n:]), true
}

// Slug is GitHub's anchor for a heading's text.
func Slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
