package nginx

import (
	"errors"
	"fmt"
)

// Directive is one nginx directive with its arguments (quotes removed,
// escapes kept as nginx keeps them) and, for a block, its directives.
type Directive struct {
	Name string
	Args []string
	File string
	Line int
	// Start and End are the byte offsets of the directive in its file,
	// from its name to past its ';' or its block's '}'.
	Start, End int
	Block      []*Directive // nil unless IsBlock
	IsBlock    bool
}

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("nginx syntax")

// Parse reads one file's directives. Errors name file:line.
func Parse(file string, src []byte) ([]*Directive, error) {
	p := &parser{lx: lexer{src: src, line: 1}, file: file}
	ds, err := p.block(false)
	if err != nil {
		return nil, err
	}
	return ds, nil
}

type parser struct {
	lx    lexer
	file  string
	depth int
}

// maxDepth bounds block nesting: nginx's own configurations nest a few
// levels; a deeper one is hostile input, not a configuration.
const maxDepth = 64

func (p *parser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %w: %s", p.file, line, ErrSyntax, fmt.Sprintf(format, args...))
}

// block reads directives until '}' (inner) or the end of input (top).
func (p *parser) block(inner bool) ([]*Directive, error) {
	var ds []*Directive
	for {
		t, err := p.lx.next()
		if err != nil {
			return nil, p.errorf(p.lx.line, "%v", err)
		}
		switch {
		case t.kind == tokEOF && inner:
			return nil, p.errorf(t.line, "unexpected end of file, expecting \"}\"")
		case t.kind == tokEOF:
			return ds, nil
		case t.kind == tokClose && inner:
			return ds, nil
		case t.kind != tokWord:
			return nil, p.errorf(t.line, "unexpected %q", t.text)
		}
		d, err := p.directive(t)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
}

// directive reads the arguments and block of the directive named by t.
func (p *parser) directive(name token) (*Directive, error) {
	d := &Directive{Name: name.text, File: p.file, Line: name.line, Start: name.start}
	if name.quoted {
		return nil, p.errorf(name.line, "a directive name cannot be quoted")
	}
	for {
		t, err := p.lx.next()
		if err != nil {
			return nil, p.errorf(p.lx.line, "%v", err)
		}
		switch t.kind {
		case tokWord:
			d.Args = append(d.Args, t.text)
		case tokSemi:
			d.End = p.lx.pos
			return d, nil
		case tokOpen:
			if p.depth++; p.depth > maxDepth {
				return nil, p.errorf(t.line, "blocks nested deeper than %d", maxDepth)
			}
			block, err := p.block(true)
			p.depth--
			if err != nil {
				return nil, err
			}
			d.Block, d.IsBlock, d.End = block, true, p.lx.pos
			return d, nil
		case tokEOF:
			return nil, p.errorf(t.line, "unexpected end of file, expecting \";\" or \"{\" after %q", d.Name)
		default:
			return nil, p.errorf(t.line, "unexpected \"}\" in %q", d.Name)
		}
	}
}
