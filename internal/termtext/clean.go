package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean is s with every control character (C0, DEL, C1), every
// bidirectional override or isolate (which reorder what follows on the
// line) and every invalid UTF-8 byte written as a visible Go escape (\x1b,
// \u202e); the rest is kept as it is. A tab is kept only when keepTab.
func Clean(s string, keepTab bool) string {
	if safe(s, keepTab) {
		return s // the common case: nothing to copy
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r, keepTab) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, keepTab):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func safe(s string, keepTab bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r, keepTab) {
			return false
		}
		i += n
	}
	return true
}

func unsafeRune(r rune, keepTab bool) bool {
	switch {
	case r == '\t':
		return !keepTab
	case unicode.IsControl(r): // C0, DEL and C1 (CSI is U+009B)
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidi embeddings, overrides, isolates and marks
	}
	return false
}
