package policy

// tagSep marks the bytes that separate tags: a comma and ASCII white space.
var tagSep = [256]bool{',': true, ' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

func isTagSep(c byte) bool { return tagSep[c] }

// AppendTags appends to dst the tags of one tag-header value (X-LiteSpeed-Tag,
// Surrogate-Key, Cache-Tag, xkey): separated by commas and/or white space,
// empty ones dropped, in order. It does not dedupe. All tags of one value
// share a single string allocation.
func AppendTags(dst []string, header []byte) []string {
	i := 0
	for i < len(header) && isTagSep(header[i]) {
		i++
	}
	if i == len(header) {
		return dst
	}
	s := string(header)
	for i < len(s) {
		for i < len(s) && isTagSep(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isTagSep(s[j]) {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j])
		}
		i = j
	}
	return dst
}

// countTags returns how many tags AppendTags would append for header.
func countTags(header []byte) int {
	n := 0
	for i := range header {
		if !isTagSep(header[i]) && (i == 0 || isTagSep(header[i-1])) {
			n++
		}
	}
	return n
}

// tagsOf returns the deduplicated tags of all tag-header values, or nil.
func tagsOf(headers [][]byte) []string {
	n := 0
	for _, h := range headers {
		n += countTags(h)
	}
	if n == 0 {
		return nil
	}
	tags := make([]string, 0, n)
	for _, h := range headers {
		tags = AppendTags(tags, h)
	}
	return dedupe(tags)
}

// dedupeLinear is the list length up to which dedupe compares pairwise
// rather than building a set.
const dedupeLinear = 32

// dedupe drops repeated strings in place, keeping the first of each.
func dedupe(ss []string) []string {
	if len(ss) > dedupeLinear {
		return dedupeSet(ss)
	}
	out := ss[:0]
	for _, s := range ss {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func dedupeSet(ss []string) []string {
	seen := make(map[string]struct{}, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if _, dup := seen[s]; !dup {
			seen[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
