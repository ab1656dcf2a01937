package waf

import (
	"regexp/syntax"
	"strconv"
	"unicode/utf8"
)

// unbounded stands for "cannot match at all" in minLength, large enough
// to lose every min and small enough not to overflow a sum.
const unbounded = 1 << 24

// minLength is a lower bound, in bytes, of what tree can match: every
// rune takes at least one byte, so a value shorter than it cannot match
// and the pattern need not run. A bound too low only costs time; it is
// never too high.
func minLength(tree *syntax.Regexp) int {
	switch tree.Op {
	case syntax.OpNoMatch:
		return unbounded
	case syntax.OpLiteral:
		return len(tree.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLength(tree.Sub[0])
	case syntax.OpRepeat:
		return min(unbounded, tree.Min*minLength(tree.Sub[0]))
	case syntax.OpConcat:
		n := 0
		for _, s := range tree.Sub {
			n = min(unbounded, n+minLength(s))
		}
		return n
	case syntax.OpAlternate:
		n := unbounded
		for _, s := range tree.Sub {
			n = min(n, minLength(s))
		}
		return n
	}
	return 0 // empty matches, anchors, word boundaries, star, quest
}

// matchesRawBytes tells a pattern written for bytes: its \xNN and
// \x{NN} escapes, read as bytes, are not UTF-8 (Go's regexp would read
// each as a rune), which is how Coraza's own @rx tells them too.
func matchesRawBytes(pattern string) bool {
	decoded := make([]byte, 0, len(pattern))
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '\\' || i+1 == len(pattern) {
			decoded = append(decoded, c)
			continue
		}
		if pattern[i+1] != 'x' {
			decoded = append(decoded, c, pattern[i+1])
			i++
			continue
		}
		v, n := hexEscape(pattern[i+2:])
		if n == 0 {
			decoded = append(decoded, c)
			continue
		}
		if v < utf8.RuneSelf || v > 0xff {
			decoded = utf8.AppendRune(decoded, rune(v))
		} else {
			decoded = append(decoded, byte(v))
		}
		i += 1 + n
	}
	return !utf8.Valid(decoded)
}

// hexEscape reads the digits after \x: two, or {up to six}; n is how
// many bytes of s they took, 0 when they are not an escape.
func hexEscape(s string) (v uint64, n int) {
	if len(s) >= 2 && s[0] != '{' {
		v, err := strconv.ParseUint(s[:2], 16, 8)
		if err != nil {
			return 0, 0
		}
		return v, 2
	}
	for end := 1; end < len(s) && end <= 7; end++ {
		if s[end] == '}' {
			v, err := strconv.ParseUint(s[1:end], 16, 32)
			if err != nil || end == 1 {
				return 0, 0
			}
			return v, end + 1
		}
	}
	return 0, 0
}
