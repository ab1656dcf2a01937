package proxy

import (
	"bytes"
	"slices"
	"strings"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// languageVariant is, for a request whose normalised Accept-Language
// matches no stored variant of o, a variant it may take all the same
// (RFC 9111 4.1 lets a cache select by the selecting header's meaning):
// one whose Content-Language is a language the request prefers most (a
// range of the highest q, RFC 4647 basic filtering: "de" takes "de-CH"),
// and whose other selecting values are the request's. The origin chose
// that language for another request; this one would get it too. nil when
// none is.
func (r *request) languageVariant(o *cache.Object) *cache.Entry {
	at := slices.Index(o.Vary.Headers, "accept-language")
	if at < 0 || r.kind == kindFragment {
		return nil
	}
	top, ok := topLanguages(r.header().Peek("Accept-Language"))
	if !ok {
		return nil
	}
	for _, e := range o.Variants {
		if sameExcept(e.Variant, r.variant, at) && servesLanguage(e, &top) {
			return e
		}
	}
	return nil
}

// sameExcept reports whether two serialised variants hold the same
// values but for the at-th.
func sameExcept(a string, b []byte, at int) bool {
	for i := 0; ; i++ {
		ai, bi := strings.IndexByte(a, 0), bytes.IndexByte(b, 0)
		if ai < 0 || bi < 0 {
			return ai < 0 && bi < 0 && a == string(b)
		}
		if i != at && a[:ai] != string(b[:bi]) {
			return false
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}

// languages are the language ranges of the highest quality in an
// Accept-Language value, at most as many as fit.
type languages struct {
	ranges [8][]byte
	n      int
}

// topLanguages collects the ranges of the highest non-zero q ("*"
// excepted: it names no language). It reports false for none.
func topLanguages(v []byte) (languages, bool) {
	var top languages
	best := 0
	for len(v) > 0 {
		var item []byte
		item, v = cutItem(v, ',')
		tag, params, _ := bytes.Cut(item, []byte{';'})
		tag = bytes.TrimSpace(tag)
		q := quality(params)
		if len(tag) == 0 || q == 0 || q < best || len(tag) == 1 && tag[0] == '*' {
			continue
		}
		if q > best {
			best, top.n = q, 0
		}
		if top.n < len(top.ranges) {
			top.ranges[top.n] = tag
			top.n++
		}
	}
	return top, top.n > 0
}

// servesLanguage reports whether e's Content-Language names a language
// one of the ranges takes.
func servesLanguage(e *cache.Entry, top *languages) bool {
	for _, f := range e.Header {
		if !bytes.EqualFold(f.Name, []byte("Content-Language")) {
			continue
		}
		for list := f.Value; len(list) > 0; {
			var tag []byte
			tag, list = cutItem(list, ',')
			tag = bytes.TrimSpace(tag)
			for _, rg := range top.ranges[:top.n] {
				if takesLanguage(rg, tag) {
					return true
				}
			}
		}
	}
	return false
}

// takesLanguage is RFC 4647 basic filtering: the range equals the tag, or
// is a prefix of it ending where a subtag does, ignoring case.
func takesLanguage(rg, tag []byte) bool {
	if len(tag) < len(rg) || len(rg) == 0 || !bytes.EqualFold(tag[:len(rg)], rg) {
		return false
	}
	return len(tag) == len(rg) || tag[len(rg)] == '-'
}
