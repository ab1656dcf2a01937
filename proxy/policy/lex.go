package policy

// maxSeconds bounds every lifetime, age and stale window: one year.
const maxSeconds = 365 * 24 * 60 * 60

// isOWS reports whether c is optional white space around a list item.
func isOWS(c byte) bool { return c == ' ' || c == '\t' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func trimOWS(b []byte) []byte {
	for len(b) > 0 && isOWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isOWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// trimQuotes drops one leading and one trailing double quote, each if present.
func trimQuotes(b []byte) []byte {
	if len(b) > 0 && b[0] == '"' {
		b = b[1:]
	}
	if len(b) > 0 && b[len(b)-1] == '"' {
		b = b[:len(b)-1]
	}
	return b
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether b begins with the lower-case ASCII prefix,
// ignoring case.
func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(b[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// eqFold reports whether b equals the lower-case ASCII string s, ignoring case.
func eqFold(b []byte, s string) bool { return len(b) == len(s) && hasPrefixFold(b, s) }

// nextItem returns the bounds of the comma-separated item of b that starts
// at or after i, without surrounding white space, and where the next item
// starts. Quotes are not special. It always makes progress: next > i.
func nextItem(b []byte, i int) (start, end, next int) {
	end = i
	for end < len(b) && b[end] != ',' {
		end++
	}
	start = i
	for start < end && isOWS(b[start]) {
		start++
	}
	next = end + 1
	for end > start && isOWS(b[end-1]) {
		end--
	}
	return start, end, next
}

// nextDirective splits the directive of a Cache-Control-style list that
// starts at or after i into its name and value (nil when it has none),
// honouring quoted strings, and returns where the next one starts.
func nextDirective(b []byte, i int) (name, value []byte, next int) {
	end, eq := directiveEnd(b, i)
	if eq < 0 {
		return trimOWS(b[i:end]), nil, end + 1
	}
	return trimOWS(b[i:eq]), trimOWS(b[eq+1 : end]), end + 1
}

// directiveEnd returns the index of the comma ending the directive that
// starts at i (or len(b)) and of its first '=' (or -1).
func directiveEnd(b []byte, i int) (end, eq int) {
	eq = -1
	quoted := false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case quoted && c == '\\':
			i++ // the escaped byte cannot end the string
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ',':
			return i, eq
		case c == '=' && eq < 0:
			eq = i
		}
	}
	return len(b), eq
}

// parseSeconds parses a delta-seconds value: digits only, optionally quoted
// and surrounded by white space, clamped to maxSeconds. Anything else (a
// sign, a fraction, trailing text) is invalid.
func parseSeconds(v []byte) (int, bool) {
	v = trimOWS(trimQuotes(trimOWS(v)))
	if len(v) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = accumulate(n, c)
	}
	return n, true
}

// leadingSeconds parses a number the way OpenLiteSpeed does in
// X-LiteSpeed-Cache-Control: spaces, '=' and '"' skipped, then leading
// digits; what follows them is ignored.
func leadingSeconds(v []byte) (int, bool) {
	v = skipLSValuePrefix(v)
	n, i := 0, 0
	for ; i < len(v) && isDigit(v[i]); i++ {
		n = accumulate(n, v[i])
	}
	return n, i > 0
}

func skipLSValuePrefix(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '=' || v[0] == '"') {
		v = v[1:]
	}
	return v
}

// accumulate appends decimal digit c to n, saturating at maxSeconds.
func accumulate(n int, c byte) int {
	return min(n*10+int(c-'0'), maxSeconds)
}
