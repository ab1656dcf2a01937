package manual

import (
	"fmt"
	"regexp"
	"strings"
)

// Roff renders md, a man page written in a small Markdown subset, as
// man(7) source for page name(section). The subset: "# NAME" sections
// and "## Sub" subsections, paragraphs, fenced blocks (shown as they
// are), "- " list items, definition items (a term line, then lines
// starting ":   " or indented four spaces), tables (shown as they are),
// and inline `code`, **bold**, *italic*, [text](link) (the text) and
// backslash escapes (\*);
// HTML comments are dropped. Anything else is a paragraph's text.
func Roff(md, name, section string) string {
	r := &roffWriter{}
	fmt.Fprintf(&r.b, ".TH %s %s \"\" \"ramjet\" \"ramjet manual\"\n", roffQuote(strings.ToUpper(name)), section)
	lines := strings.Split(stripComments(md), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			r.state = ""
		case strings.HasPrefix(line, "# "):
			r.macro(".SH " + roffQuote(strings.ToUpper(strings.TrimSpace(line[2:]))))
		case strings.HasPrefix(line, "## "):
			r.macro(".SS \"" + strings.ReplaceAll(inline(strings.TrimSpace(line[3:])), `"`, `\(dq`) + `"`)
		case fenceOf(strings.TrimLeft(line, " ")) != "":
			i = r.block(lines, i)
		case strings.HasPrefix(trimmed, "|"):
			i = r.table(lines, i)
		case strings.HasPrefix(line, "- "):
			r.macro(".IP \\(bu 2")
			r.text(line[2:])
			r.state = "item"
		case i+1 < len(lines) && strings.HasPrefix(lines[i+1], ":   "):
			r.macro(".TP")
			r.text(line)
			r.state = "def"
		case strings.HasPrefix(line, ":   ") && r.state == "def":
			r.text(line[4:])
		case r.state == "":
			r.macro(".PP")
			r.text(line)
			r.state = "para"
		default: // a paragraph's, item's or definition's next line
			r.text(line)
		}
	}
	return r.b.String()
}

type roffWriter struct {
	b     strings.Builder
	state string // "", "para", "item", "def": what a text line continues
}

func (r *roffWriter) macro(m string) { r.b.WriteString(m + "\n") }

// text writes one line of running text, never read as a request.
func (r *roffWriter) text(s string) {
	s = inline(strings.TrimSpace(s))
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	r.b.WriteString(s + "\n")
}

// verbatim writes lines as they are, unfilled, indented.
func (r *roffWriter) verbatim(lines []string) {
	r.macro(".PP\n.RS 4\n.nf")
	for _, l := range lines {
		l = escape(l)
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			l = `\&` + l
		}
		r.b.WriteString(l + "\n")
	}
	r.macro(".fi\n.RE")
	r.state = ""
}

// block writes the fenced block opening at lines[i] and returns the
// index of its closing fence.
func (r *roffWriter) block(lines []string, i int) int {
	open := strings.TrimLeft(lines[i], " ")
	indent := len(lines[i]) - len(open)
	fence := fenceOf(open)
	var body []string
	j := i + 1
	for ; j < len(lines); j++ {
		t := strings.TrimLeft(lines[j], " ")
		if f := fenceOf(t); f != "" && strings.HasPrefix(f, fence) && strings.TrimSpace(t[len(f):]) == "" {
			break
		}
		body = append(body, dedent(lines[j], indent))
	}
	r.verbatim(body)
	return j
}

// table writes the table starting at lines[i] as it is, without its
// delimiter row, and returns the index of its last row.
func (r *roffWriter) table(lines []string, i int) int {
	var rows []string
	j := i
	for ; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|"); j++ {
		row := strings.TrimSpace(lines[j])
		if strings.Trim(row, "|-: ") == "" {
			continue
		}
		rows = append(rows, strings.ReplaceAll(strings.ReplaceAll(row, "`", ""), "**", ""))
	}
	r.verbatim(rows)
	return j - 1
}

var (
	commentRE = regexp.MustCompile(`(?s)<!--.*?-->`)
	inlineRE  = regexp.MustCompile("\\\\[*`\\[\\]\\\\]|`[^`]+`|\\*\\*[^*]+\\*\\*|\\*[^*\\s][^*]*\\*|\\[[^\\]]+\\]\\([^)]+\\)")
)

// unescapeMarkup undoes escapeMarkup inside a code span.
var unescapeMarkup = strings.NewReplacer(`\*`, "*", `\[`, "[", `\]`, "]")

func stripComments(md string) string { return commentRE.ReplaceAllString(md, "") }

// inline renders code and bold in bold, emphasis in italics and a link
// as its text; the rest is escaped.
func inline(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range inlineRE.FindAllStringIndex(s, -1) {
		b.WriteString(escape(s[last:m[0]]))
		tok := s[m[0]:m[1]]
		switch {
		case strings.HasPrefix(tok, `\`):
			b.WriteString(escape(tok[1:]))
		case strings.HasPrefix(tok, "`"): // a code span holds no markup: its escapes are literal
			b.WriteString(`\fB` + escape(unescapeMarkup.Replace(tok[1:len(tok)-1])) + `\fR`)
		case strings.HasPrefix(tok, "**"):
			b.WriteString(`\fB` + escape(tok[2:len(tok)-2]) + `\fR`)
		case strings.HasPrefix(tok, "*"):
			b.WriteString(`\fI` + escape(tok[1:len(tok)-1]) + `\fR`)
		default:
			text, _, _ := strings.Cut(tok[1:], "](")
			b.WriteString(inline(text))
		}
		last = m[1]
	}
	b.WriteString(escape(s[last:]))
	return b.String()
}

// escape makes s literal roff text: backslashes, hyphens (a minus, so
// options copy and paste) and every character beyond ASCII as its
// Unicode escape, which needs no input encoding.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7f:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func roffQuote(s string) string { return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"` }
