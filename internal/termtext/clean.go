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
// \u202e); the rest is kept as it is, and so are the control characters
// in keep (say "\t\n" for text of several lines).
func Clean(s, keep string) string {
	if safe(s, keep) {
		return s // the common case: nothing to copy
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r, keep) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, keep):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func safe(s string, keep string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r, keep) {
			return false
		}
		i += n
	}
	return true
}

func unsafeRune(r rune, keep string) bool {
	switch {
	case r < 0x80 && strings.IndexByte(keep, byte(r)) >= 0:
		return false
	case unicode.IsControl(r): // C0, DEL and C1 (CSI is U+009B)
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidi embeddings, overrides, isolates and marks
	}
	return false
}
