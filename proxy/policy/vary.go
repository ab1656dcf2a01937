package policy

import "strings"

// varyStar reports whether a Vary value lists "*".
func varyStar(v []byte) bool {
	for i := 0; i < len(v); {
		start, end, next := nextItem(v, i)
		i = next
		if end-start == 1 && v[start] == '*' {
			return true
		}
	}
	return false
}

// varyHeaders returns the header names listed in a Vary value, lower-cased
// and deduplicated, without accept-encoding (the proxy compresses itself),
// or nil. The names share one string allocation.
func varyHeaders(v []byte) []string {
	var out []string
	var s string // v lower-cased; same offsets as v
	for i := 0; i < len(v); {
		start, end, next := nextItem(v, i)
		i = next
		if start == end || eqFold(v[start:end], "accept-encoding") {
			continue
		}
		if out == nil {
			s = lowerString(v)
			out = make([]string, 0, countItems(v))
		}
		out = append(out, s[start:end])
	}
	return dedupe(out)
}

// varyCookies returns the cookie names of an X-LiteSpeed-Vary value's
// cookie=NAME items, case kept and deduplicated, or nil. Other items are
// ignored.
func varyCookies(v []byte) []string {
	const prefix = "cookie="
	var out []string
	var s string // v as a string; same offsets as v
	for i := 0; i < len(v); {
		start, end, next := nextItem(v, i)
		i = next
		if !hasPrefixFold(v[start:end], prefix) {
			continue
		}
		start += len(prefix)
		for start < end && isOWS(v[start]) {
			start++
		}
		if start == end {
			continue
		}
		if out == nil {
			s = string(v)
			out = make([]string, 0, countItems(v))
		}
		out = append(out, s[start:end])
	}
	return dedupe(out)
}

// countItems returns an upper bound of the items in a comma-separated list.
func countItems(v []byte) int {
	n := 1
	for _, c := range v {
		if c == ',' {
			n++
		}
	}
	return n
}

// lowerString returns v as a string with ASCII letters lower-cased.
func lowerString(v []byte) string {
	var b strings.Builder
	b.Grow(len(v))
	for _, c := range v {
		b.WriteByte(lower(c))
	}
	return b.String()
}
