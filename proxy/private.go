package proxy

import (
	"bytes"
	"strconv"
)

// appendPrivateKey is the private cache key: identity, then the page key.
// The identity is written as 16 hex digits, without strconv: this runs
// for every request of a client with a session.
func appendPrivateKey(dst []byte, id uint64, key []byte) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, digits[id>>uint(shift)&0xf])
	}
	dst = append(dst, '|')
	return append(dst, key...)
}

// privateTags maps a private response's tags into its owner's namespace,
// so that "private, tag=x" from one user purges only their copies; a
// "public:" tag stays public (in its site's namespace), so the site's
// public purges reach the private copies too (LSCache). Every private
// entry also carries its owner's "*" and its site's all-tag.
func privateTags(id uint64, scope string, tags []string) []string {
	prefix := strconv.FormatUint(id, 16) + userSep
	out := make([]string, 0, len(tags)+2)
	for _, t := range tags {
		if pub, ok := bytes.CutPrefix([]byte(t), []byte("public:")); ok {
			out = append(out, scopedTag(scope, string(pub)))
			continue
		}
		out = append(out, prefix+t)
	}
	return append(out, prefix+"*", siteAll(scope))
}

// privateTag is the namespaced name of one user's tag.
func privateTag(id uint64, tag string) string {
	return strconv.FormatUint(id, 16) + userSep + tag
}

// userSep separates a user's identity from a tag: not the site separator,
// so that a site's tag purges never read a user's namespace as a site.
const userSep = "\x01"
