package percent

import "bytes"

// At is the byte escaped at s[i:] ("%XX", either case of hex digit);
// ok is false when s[i:] is not a whole escape.
func At(s []byte, i int) (b byte, ok bool) {
	if i+2 >= len(s) || s[i] != '%' {
		return 0, false
	}
	hi, ok1 := unhex(s[i+1])
	lo, ok2 := unhex(s[i+2])
	return hi<<4 | lo, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Decode decodes every escape of s; an invalid one stays as it is. It
// returns s itself when there is nothing to decode, a new slice if not.
func Decode(s []byte) []byte {
	if bytes.IndexByte(s, '%') < 0 {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if b, ok := At(s, i); ok {
			out = append(out, b)
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return out
}

// pathSafe are the bytes besides letters and digits that stand in a
// path unescaped (RFC 3986 pchar and "/"); "%" is not one of them.
const pathSafe = "-_.~!$&'()*+,;=:@/"

// AppendEscapedPath appends s with every byte that may not stand in a
// URL path escaped, "%" included, as Apache's ap_escape_uri does.
func AppendEscapedPath(dst, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range s {
		if isAlnum(c) || bytes.IndexByte([]byte(pathSafe), c) >= 0 {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hex[c>>4], hex[c&15])
	}
	return dst
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
