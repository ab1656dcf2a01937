package apache

import (
	"errors"
	"fmt"
	"strings"
)

// Directive is one directive or section (<Name args> … </Name>) of an
// Apache configuration file.
type Directive struct {
	Name string // as written; Apache's names are case-insensitive
	Args []string
	File string
	Line int
	// Start is the offset of the directive's first byte; HeadEnd is past
	// the end of its (first) line, End past the end of its last line
	// (a section's closing tag).
	Start, HeadEnd, End int
	Block               []*Directive
	IsBlock             bool
}

// Is reports whether the directive is name, ignoring case.
func (d *Directive) Is(name string) bool { return strings.EqualFold(d.Name, name) }

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("apache syntax")

const maxDepth = 64

// Parse reads one file's directives. Errors name file:line.
func Parse(file string, src []byte) ([]*Directive, error) {
	p := &parser{file: file, src: src}
	ds, closer, err := p.block("")
	if err != nil {
		return nil, err
	}
	if closer != nil {
		return nil, p.errorf(closer.line, "</%s> without <%s>", closer.name, closer.name)
	}
	return ds, nil
}

type parser struct {
	file  string
	src   []byte
	pos   int
	line  int // of the line read last
	depth int
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %w: %s", p.file, line, ErrSyntax, fmt.Sprintf(format, args...))
}

// logical is one logical line: its physical lines joined where they
// ended in a backslash.
type logical struct {
	text       string
	line       int
	start, end int // bytes of the file: first non-space byte, past the newline
}

// next returns the next logical line that is not blank or a comment.
func (p *parser) next() (logical, bool) {
	for p.pos < len(p.src) {
		l := logical{line: p.line + 1, start: p.pos}
		var b strings.Builder
		for p.pos < len(p.src) {
			i := p.pos
			for i < len(p.src) && p.src[i] != '\n' {
				i++
			}
			seg := strings.TrimRight(string(p.src[p.pos:i]), "\r")
			p.line++
			p.pos = min(i+1, len(p.src))
			if strings.HasSuffix(seg, "\\") && p.pos < len(p.src) {
				b.WriteString(strings.TrimSuffix(seg, "\\"))
				b.WriteByte(' ')
				continue
			}
			b.WriteString(seg)
			break
		}
		l.end = p.pos
		text := strings.TrimSpace(b.String())
		if text == "" || text[0] == '#' {
			continue
		}
		l.start += len(string(p.src[l.start:l.end])) - len(strings.TrimLeft(string(p.src[l.start:l.end]), " \t"))
		l.text = text
		return l, true
	}
	return logical{}, false
}

type closer struct {
	name string
	line int
	end  int
}

// block reads directives until the closing tag of section (the end of
// the file at the top) and returns the closer it stopped at.
func (p *parser) block(section string) ([]*Directive, *closer, error) {
	var ds []*Directive
	for {
		l, ok := p.next()
		if !ok {
			if section != "" {
				return nil, nil, p.errorf(p.line, "<%s> is not closed", section)
			}
			return ds, nil, nil
		}
		if strings.HasPrefix(l.text, "</") {
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l.text, "</"), ">"))
			if !strings.HasSuffix(l.text, ">") || section == "" || !strings.EqualFold(name, section) {
				return nil, nil, p.errorf(l.line, "%s does not close <%s>", l.text, section)
			}
			return ds, &closer{name: name, line: l.line, end: l.end}, nil
		}
		d, err := p.directive(l)
		if err != nil {
			return nil, nil, err
		}
		ds = append(ds, d)
	}
}

func (p *parser) directive(l logical) (*Directive, error) {
	d := &Directive{File: p.file, Line: l.line, Start: l.start, HeadEnd: l.end, End: l.end}
	text := l.text
	if strings.HasPrefix(text, "<") {
		if !strings.HasSuffix(text, ">") {
			return nil, p.errorf(l.line, "section %q lacks its closing \">\"", text)
		}
		text = strings.TrimSuffix(text[1:], ">")
		d.IsBlock = true
	}
	args, err := fields(text)
	if err != nil {
		return nil, p.errorf(l.line, "%v", err)
	}
	if len(args) == 0 || args[0] == "" {
		return nil, p.errorf(l.line, "a directive or section without a name")
	}
	d.Name, d.Args = args[0], args[1:]
	if !d.IsBlock {
		return d, nil
	}
	if p.depth++; p.depth > maxDepth {
		return nil, p.errorf(l.line, "sections nested deeper than %d", maxDepth)
	}
	block, c, err := p.block(d.Name)
	p.depth--
	if err != nil {
		return nil, err
	}
	d.Block, d.End = block, c.end
	return d, nil
}

// fields splits a line into words as Apache's ap_getword_conf does:
// white space separates, "…" and '…' quote (a backslash escapes the
// quote inside).
func fields(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		if q := s[i]; q == '"' || q == '\'' {
			var b strings.Builder
			i++
			for ; i < len(s) && s[i] != q; i++ {
				if s[i] == '\\' && i+1 < len(s) && s[i+1] == q {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated quoted string")
			}
			i++
			out = append(out, b.String())
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, s[i:j])
		i = j
	}
	return out, nil
}
