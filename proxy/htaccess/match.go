package htaccess

import (
	"bytes"
	"regexp"
	"strings"
)

// matcher answers "does the pattern match" without running the regex
// engine for the shapes .htaccess files are mostly made of: ".*", "^",
// ".", a literal ("image/webp", "^index\.php$") and alternations of
// literals (the LiteSpeed Cache plugin's mobile user-agent list). Go's
// regexp backtracks through those, case-folding rune by rune, at a few
// microseconds per user agent; these cost tens of nanoseconds. Anything
// else (and every match whose captures are needed) goes to re.
type matcher struct {
	re   *regexp.Regexp
	kind matchKind
	alts []literal
	fold bool
	// first lists, for each byte, the unanchored alternatives that start
	// with it (both cases when folding), +1 (0: none): one pass over the
	// subject tries only those.
	first [256][]uint8
}

type matchKind uint8

const (
	matchRegex    matchKind = iota
	matchAlways             // ".*", "^", ".?", "" …
	matchNonEmpty           // ".": any character but a newline
	matchLiterals           // one of alts
)

// literal is one alternative: text (lower case when folding), anchored
// at the start and/or the end.
type literal struct {
	text       []byte
	start, end bool
}

func newMatcher(re *regexp.Regexp, pat string, fold bool) matcher {
	m := matcher{re: re, fold: fold}
	switch pat {
	case "", ".*", "^.*$", "^.*", ".*$", "^", "$", ".?", "^.?", "(.*)", "^(.*)$", "^(.*)":
		m.kind = matchAlways
		return m
	case ".", "^.", ".$", "(.)", "(.+)", ".+", "^.+$", "^(.+)$":
		m.kind = matchNonEmpty
		return m
	}
	if alts, ok := literalAlternatives(pat, fold); ok {
		m.kind, m.alts = matchLiterals, alts
		for i, a := range alts {
			if !a.start && !a.end && i < 255 {
				c := a.text[0]
				m.first[c] = append(m.first[c], uint8(i))
				if u := upper(c); fold && u != c {
					m.first[u] = append(m.first[u], uint8(i))
				}
			}
		}
	}
	return m
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// literalAlternatives reads pat as "a|b|c" of plain text (escapes
// allowed, each alternative possibly anchored), or reports false.
func literalAlternatives(pat string, fold bool) ([]literal, bool) {
	var alts []literal
	var cur literal
	var text []byte
	flush := func() {
		cur.text = text
		if fold {
			cur.text = bytes.ToLower(text)
		}
		alts = append(alts, cur)
		cur, text = literal{}, nil
	}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\':
			if i+1 >= len(pat) || isAlnum(pat[i+1]) {
				return nil, false // \d, \w, \b …: a class, not a character
			}
			i++
			text = append(text, pat[i])
		case c == '|':
			if cur.end {
				cur.end = true
			}
			flush()
		case c == '^' && len(text) == 0 && !cur.start:
			cur.start = true
		case c == '$' && (i+1 == len(pat) || pat[i+1] == '|'):
			cur.end = true
		case strings.IndexByte(".[]()*+?{}^$", c) >= 0:
			return nil, false
		case c >= 0x80:
			return nil, false // a multi-byte character: leave folding to regexp
		default:
			text = append(text, c)
		}
	}
	flush()
	for _, a := range alts {
		if len(a.text) == 0 && !a.start && !a.end {
			return nil, false // "a||b": the empty alternative matches all; let regexp say so
		}
	}
	return alts, true
}

// match reports whether the pattern matches s.
func (m *matcher) match(s []byte) bool {
	switch m.kind {
	case matchAlways:
		return true
	case matchNonEmpty:
		for _, c := range s {
			if c != '\n' {
				return true
			}
		}
		return false
	case matchLiterals:
		if m.scan(s) {
			return true
		}
		for i := range m.alts {
			if (m.alts[i].start || m.alts[i].end) && m.alts[i].in(s, m.fold) {
				return true
			}
		}
		if m.fold && hasNonASCII(s) {
			// Unicode folding can match where ASCII folding did not
			// (the Kelvin sign is a k): let regexp decide.
			return m.re.Match(s)
		}
		return false
	}
	return m.re.Match(s)
}

// scan looks for the unanchored alternatives, trying them only where
// the subject has one's first byte.
func (m *matcher) scan(s []byte) bool {
	for i, c := range s {
		for _, j := range m.first[c] {
			a := &m.alts[j]
			if len(s)-i >= len(a.text) && eq(s[i:i+len(a.text)], a.text, m.fold) {
				return true
			}
		}
	}
	return false
}

func (a *literal) in(s []byte, fold bool) bool {
	t := a.text
	switch {
	case a.start && a.end:
		return len(s) == len(t) && eq(s, t, fold)
	case a.start:
		return len(s) >= len(t) && eq(s[:len(t)], t, fold)
	case a.end:
		return len(s) >= len(t) && eq(s[len(s)-len(t):], t, fold)
	case !fold:
		return bytes.Contains(s, t)
	}
	for i := 0; i+len(t) <= len(s); i++ {
		if lower(s[i]) == t[0] && eq(s[i:i+len(t)], t, true) {
			return true
		}
	}
	return false
}

// eq compares s with t (lower case when folding).
func eq(s, t []byte, fold bool) bool {
	if !fold {
		return bytes.Equal(s, t)
	}
	for i := range t {
		if lower(s[i]) != t[i] {
			return false
		}
	}
	return true
}

func hasNonASCII(s []byte) bool {
	for _, c := range s {
		if c >= 0x80 {
			return true
		}
	}
	return false
}
