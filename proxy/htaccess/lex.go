package htaccess

import (
	"strings"
)

// line is one logical line of a file: physical lines joined where one
// ends in a backslash, trimmed, comments and blank lines left out.
type line struct {
	n    int    // number of its first physical line
	text string // without the directive's trailing white space
}

// maxLineLen bounds a logical line, as Apache's MAX_STRING_LEN bounds
// its config lines; a longer one is an error, not a truncation.
const maxLineLen = 64 << 10

// lines splits src into logical lines.
func lines(src string) ([]line, *lineError) {
	src = strings.TrimPrefix(src, "\ufeff") // a byte-order mark, as editors on Windows write one
	var out []line
	var cont strings.Builder
	start := 0
	n := 0
	for len(src) > 0 {
		var raw string
		raw, src, _ = strings.Cut(src, "\n")
		n++
		raw = strings.TrimRight(raw, " \t\r\f\v")
		if strings.HasSuffix(raw, "\\") && !strings.HasSuffix(raw, "\\\\") {
			if cont.Len() == 0 {
				start = n
			}
			cont.WriteString(raw[:len(raw)-1])
			if cont.Len() > maxLineLen {
				return nil, &lineError{n: start, msg: "line too long"}
			}
			continue
		}
		first := n
		if cont.Len() > 0 {
			cont.WriteString(raw)
			raw, first = cont.String(), start
			cont.Reset()
		}
		if len(raw) > maxLineLen {
			return nil, &lineError{n: first, msg: "line too long"}
		}
		t := strings.TrimLeft(raw, " \t\r\f\v")
		if t == "" || t[0] == '#' {
			continue
		}
		out = append(out, line{n: first, text: t})
	}
	if cont.Len() > 0 {
		t := strings.TrimSpace(cont.String())
		if t != "" && t[0] != '#' {
			out = append(out, line{n: start, text: t})
		}
	}
	return out, nil
}

type lineError struct {
	n   int
	msg string
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// words splits a directive's arguments as Apache's ap_getword_conf does:
// white space separates, "..." and '...' quote (a backslash before the
// quote character escapes it).
func words(s string) []string {
	var out []string
	for {
		for len(s) > 0 && isSpace(s[0]) {
			s = s[1:]
		}
		if s == "" {
			return out
		}
		var w string
		w, s = word(s)
		out = append(out, w)
	}
}

func word(s string) (w, rest string) {
	if q := s[0]; q == '"' || q == '\'' {
		var b strings.Builder
		i := 1
		for ; i < len(s) && s[i] != q; i++ {
			if s[i] == '\\' && i+1 < len(s) && s[i+1] == q {
				i++
			}
			b.WriteByte(s[i])
		}
		if i < len(s) {
			i++ // the closing quote
		}
		return b.String(), s[i:]
	}
	i := 0
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// ruleArgs splits RewriteRule and RewriteCond arguments as mod_rewrite's
// own parser does: quotes as above but without escapes, and outside them
// a backslash before white space keeps the space in the word (the
// backslash stays: the regex reads "\ " as a space).
func ruleArgs(s string) []string {
	var out []string
	for {
		for len(s) > 0 && isSpace(s[0]) {
			s = s[1:]
		}
		if s == "" {
			return out
		}
		var q byte
		if s[0] == '"' || s[0] == '\'' {
			q, s = s[0], s[1:]
		}
		i := 0
		for i < len(s) {
			c := s[i]
			if q == 0 && isSpace(c) || q != 0 && c == q {
				break
			}
			if c == '\\' && i+1 < len(s) && isSpace(s[i+1]) {
				i += 2
				continue
			}
			i++
		}
		out = append(out, s[:i])
		if i < len(s) && q != 0 {
			i++
		}
		s = s[i:]
	}
}
