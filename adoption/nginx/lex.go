package nginx

import "errors"

type tokKind int

const (
	tokWord tokKind = iota
	tokSemi
	tokOpen
	tokClose
	tokEOF
)

type token struct {
	kind   tokKind
	text   string
	line   int
	start  int // byte offset of the token's first byte
	quoted bool
}

// lexer splits nginx syntax the way ngx_conf_read_token does: words
// separated by white space, "#" comments to the end of the line, single
// or double quotes with backslash escapes, and ";", "{", "}" as tokens
// of their own outside quotes and "${...}" variables.
type lexer struct {
	src  []byte
	pos  int
	line int
}

var errUnterminated = errors.New("unterminated quoted string")

func (l *lexer) next() (token, error) {
	l.skipSpaceAndComments()
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, line: l.line, start: l.pos}, nil
	}
	t := token{line: l.line, start: l.pos}
	switch c := l.src[l.pos]; c {
	case ';', '{', '}':
		l.pos++
		t.kind, t.text = map[byte]tokKind{';': tokSemi, '{': tokOpen, '}': tokClose}[c], string(c)
		return t, nil
	case '"', '\'':
		s, err := l.quoted(c)
		t.text, t.quoted = s, true
		return t, err
	}
	t.text = l.word()
	return t, nil
}

func (l *lexer) skipSpaceAndComments() {
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == '\n':
			l.line++
			l.pos++
		case c == ' ' || c == '\t' || c == '\r':
			l.pos++
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		default:
			return
		}
	}
}

// quoted reads a string quoted with q; a backslash keeps the next byte
// (nginx unescapes \", \', \\ and leaves other escapes as written).
func (l *lexer) quoted(q byte) (string, error) {
	l.pos++ // the opening quote
	var b []byte
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == q:
			l.pos++
			return string(b), nil
		case c == '\\' && l.pos+1 < len(l.src):
			n := l.src[l.pos+1]
			if n != q && n != '\\' {
				b = append(b, c)
			}
			b = append(b, n)
			if n == '\n' {
				l.line++
			}
			l.pos += 2
			continue
		case c == '\n':
			l.line++
		}
		b = append(b, c)
		l.pos++
	}
	return "", errUnterminated
}

// word reads an unquoted word: up to white space, ';' or '{' (but not
// the brace of "${var}"). A quote or '}' inside a word is part of it, as
// in nginx.
func (l *lexer) word() string {
	start := l.pos
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '$' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '{':
			l.pos += 2
			continue
		case c == '\\' && l.pos+1 < len(l.src) && l.src[l.pos+1] != '\n':
			l.pos += 2
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '{':
			return string(l.src[start:l.pos])
		}
		l.pos++
	}
	return string(l.src[start:l.pos])
}
