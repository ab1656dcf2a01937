package esi

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Document is a page parsed once at store time: literal segments and
// include points, in order.
type Document struct {
	Segments []Segment
	Includes int // number of include segments (for limits and metrics)
}

// Segment is either literal bytes or an include point.
type Segment struct {
	Literal []byte   // when Include == nil: bytes written as they are
	Include *Include // else: an include point
}

// Include is one <esi:include> or <esi:inline>.
type Include struct {
	Src, Alt        string // entity-decoded, whitespace-trimmed
	OnErrorContinue bool   // onerror="continue"
	CacheControl    string // LiteSpeed cache-control attribute, e.g. "private,no-vary" ("" if absent)
	CacheTag        string // LiteSpeed cache-tag attribute
	AsVar           bool   // as-var="1" (or "true")
	Combine         string // combine attribute ("sub", "main", "")
	Inline          []byte // <esi:inline name=…>body</esi:inline>: the body (Src = name); non-nil marks an inline
}

// Stats counts what Parse could not take as well-formed ESI.
type Stats struct {
	Malformed int // constructs dropped or passed through
}

// DefaultMaxIncludes is the bound Parse uses when maxIncludes <= 0, and the
// bound for fragments parsed during assembly.
const DefaultMaxIncludes = 100

const (
	maxAttrValue = 8 << 10  // bytes per attribute value
	maxTag       = 16 << 10 // bytes per tag
)

// Parse scans body once. It never fails and never panics: malformed markup
// is passed through as literal text or dropped as the package doc says, and
// counted in Stats. maxIncludes bounds include points (excess are dropped
// and counted); <= 0 means DefaultMaxIncludes. Literal segments and inline
// bodies reference body (no copy): the caller keeps body immutable.
func Parse(body []byte, maxIncludes int) (*Document, Stats) {
	if maxIncludes <= 0 {
		maxIncludes = DefaultMaxIncludes
	}
	p := parser{body: body, doc: &Document{}, max: maxIncludes}
	for i := range p.miss {
		for k := range p.miss[i] {
			p.miss[i][k] = missRange{from: len(body) + 1}
		}
	}
	p.scan(0, len(body), false)
	p.flush(len(body))
	return p.doc, p.stats
}

// Closing patterns whose failed searches are remembered.
const (
	patCommentEnd = iota // -->
	patCDATAEnd          // ]]>
	patRemove            // </esi:remove>
	patInline            // </esi:inline>
	patCount
)

// missRange records that a pattern does not occur in body[from:hi]. One is
// kept per pattern for the whole body and one for the current <!--esi
// region; searches in each have a fixed hi and rising from, so the first
// miss covers every later one.
type missRange struct{ from, hi int }

type parser struct {
	body  []byte
	doc   *Document
	stats Stats
	max   int
	lit   int                    // start of the pending literal run
	miss  [2][patCount]missRange // [0]: hi == len(body); [1]: inside <!--esi
}

// flush emits body[p.lit:end] as a literal segment if it is not empty.
func (p *parser) flush(end int) {
	if end > p.lit {
		p.doc.Segments = append(p.doc.Segments, Segment{Literal: p.body[p.lit:end:end]})
	}
	p.lit = end
}

// drop removes body[start:end] from the output.
func (p *parser) drop(start, end int) {
	p.flush(start)
	p.lit = end
}

// scan processes body[lo:hi]. inComment is set inside <!--esi … -->.
func (p *parser) scan(lo, hi int, inComment bool) {
	i := lo
	for i < hi {
		j := bytes.IndexByte(p.body[i:hi], '<')
		if j < 0 {
			return
		}
		i += j
		rest := p.body[i:hi]
		if plainTag(rest) {
			i++
			continue
		}
		esiOpen := isEsiCommentOpen(rest)
		switch {
		case esiOpen && !inComment:
			i = p.esiComment(i, hi)
		case esiOpen:
			// Nested: Varnish drops the opener too; left in, it would open
			// an HTML comment that hides the rest of the page.
			p.stats.Malformed++
			p.drop(i, i+7)
			i += 7
		case hasPrefixFold(rest, "<!--"):
			i = p.htmlComment(i, hi)
		case hasPrefixFold(rest, "<esi:"):
			i = p.element(i, hi)
		case hasPrefixFold(rest, "</esi:"):
			i = p.strayClose(i, hi)
		default:
			i++
		}
	}
}

// plainTag reports cheaply that the '<' starting b starts nothing scan
// acts on ("<!", "<e", "</e" in any case): most tags of a page.
func plainTag(b []byte) bool {
	switch {
	case len(b) < 2:
		return true
	case b[1] == '/':
		return len(b) < 3 || b[2]|0x20 != 'e'
	}
	return b[1] != '!' && b[1]|0x20 != 'e'
}

// isEsiCommentOpen reports whether b starts with the "<!--esi" opener.
func isEsiCommentOpen(b []byte) bool {
	return hasPrefixFold(b, "<!--esi") && (len(b) == 7 || isEsiCommentFollow(b[7]))
}

func isEsiCommentFollow(c byte) bool { return isSpace(c) || c == '<' || c == '-' }

// htmlComment passes an ordinary comment through; markup inside is not
// recognised. An unterminated comment runs to hi.
func (p *parser) htmlComment(i, hi int) int {
	e := p.find(patCommentEnd, i+4, hi)
	if e < 0 {
		return hi
	}
	return e + 3
}

// esiComment drops "<!--esi" and "-->" and processes what is between.
// Without "-->" only the opener is dropped (as Varnish does: left in, it
// would open an HTML comment that hides the rest of the page).
func (p *parser) esiComment(i, hi int) int {
	e := p.find(patCommentEnd, i+7, hi)
	if e < 0 {
		p.stats.Malformed++
		p.drop(i, i+7)
		return i + 7
	}
	p.drop(i, i+7)
	p.scan(i+7, e, true)
	p.drop(e, e+3)
	return e + 3
}

// find returns the index of the pattern in body[from:hi], or -1. Misses are
// remembered: a search within a range already known to miss is O(1).
func (p *parser) find(pat, from, hi int) int {
	m := &p.miss[0][pat]
	if hi != len(p.body) {
		m = &p.miss[1][pat]
	}
	if from >= m.from && hi <= m.hi {
		return -1
	}
	var at int
	switch pat {
	case patCommentEnd:
		at = indexFrom(p.body[:hi], from, "-->")
	case patCDATAEnd:
		at = indexFrom(p.body[:hi], from, "]]>")
	case patRemove:
		at, _ = p.findClose("remove", from, hi)
	case patInline:
		at, _ = p.findClose("inline", from, hi)
	}
	if at < 0 {
		*m = missRange{from: from, hi: hi}
	}
	return at
}

// indexFrom is the index of pat in b[from:], counted from the start of b, or -1.
func indexFrom(b []byte, from int, pat string) int {
	if at := bytes.Index(b[from:], []byte(pat)); at >= 0 {
		return from + at
	}
	return -1
}

// findClose finds "</esi:name" ws* ">" in body[from:hi], outside CDATA
// sections (a closer inside one is text: Varnish's parser skips CDATA
// whole): its start and end. A CDATA section without "]]>" runs to hi.
//
// The search is for the block that starts at from, so a remembered miss
// (find) also answers for later blocks of the region, even one that
// starts inside a section this search skipped.
func (p *parser) findClose(name string, from, hi int) (int, int) {
	for i := from; i < hi; {
		j := bytes.IndexByte(p.body[i:hi], '<')
		if j < 0 {
			return -1, -1
		}
		i += j
		if bytes.HasPrefix(p.body[i:hi], []byte(cdataOpen)) {
			e := p.find(patCDATAEnd, i+len(cdataOpen), hi)
			if e < 0 {
				return -1, -1
			}
			i = e + 3
			continue
		}
		if end := p.closeTag(name, i, hi); end > 0 {
			return i, end
		}
		i++
	}
	return -1, -1
}

const cdataOpen = "<![CDATA["

// closeTag returns the end of "</esi:name" ws* ">" at i, or -1.
func (p *parser) closeTag(name string, i, hi int) int {
	rest := p.body[i:hi]
	if !hasPrefixFold(rest, "</esi:") || !hasPrefixFold(rest[6:], name) {
		return -1
	}
	k := i + 6 + len(name)
	for k < hi && isSpace(p.body[k]) {
		k++
	}
	if k < hi && p.body[k] == '>' {
		return k + 1
	}
	return -1
}

// strayClose drops a closing esi tag that closes nothing.
func (p *parser) strayClose(i, hi int) int {
	p.stats.Malformed++
	k := i + 6
	for k < hi && isNameChar(p.body[k]) && k-i < maxTag {
		k++
	}
	for k < hi && isSpace(p.body[k]) && k-i < maxTag {
		k++
	}
	if k == i+6 || k >= hi || p.body[k] != '>' {
		return p.dropBroken(i, k, hi)
	}
	p.drop(i, k+1)
	return k + 1
}

// dropBroken drops a tag at i that could not be parsed, the scanner
// having given up at stop: through the next '>' (Varnish drops a broken
// tag up to there), but never past the next '<', which may start a good
// tag (Varnish would drop that too), and to hi when there is neither (a
// body that ends inside a tag). It returns where scanning resumes.
func (p *parser) dropBroken(i, stop, hi int) int {
	end := hi
	if k := bytes.IndexAny(p.body[stop:hi], "<>"); k >= 0 {
		end = stop + k
		if p.body[end] == '>' {
			end++
		}
	}
	p.drop(i, end)
	return end
}

// element handles a tag starting with "<esi:" at i.
func (p *parser) element(i, hi int) int {
	t, ok, stop := p.parseTag(i, hi)
	if !ok {
		p.stats.Malformed++
		return p.dropBroken(i, stop, hi)
	}
	switch t.name {
	case "include":
		return p.include(i, hi, &t)
	case "inline":
		return p.inline(i, hi, &t)
	case "remove":
		return p.remove(i, hi, &t)
	case "comment":
		end := p.optionalClose("comment", &t, hi)
		p.drop(i, end)
		return end
	default:
		p.stats.Malformed++
		p.drop(i, t.end)
		return t.end
	}
}

// optionalClose consumes ws* </esi:name> right after a tag that did not
// self-close, and returns the end of what was consumed.
func (p *parser) optionalClose(name string, t *tag, hi int) int {
	if t.selfClose {
		return t.end
	}
	k := t.end
	for k < hi && k-t.end < maxTag && isSpace(p.body[k]) {
		k++
	}
	if end := p.closeTag(name, k, hi); end > 0 {
		return end
	}
	return t.end
}

func (p *parser) include(i, hi int, t *tag) int {
	end := p.optionalClose("include", t, hi)
	p.drop(i, end)
	src := decodeAttr(t.attr[attrSrc])
	if src == "" || p.doc.Includes >= p.max {
		p.stats.Malformed++
		return end
	}
	p.addInclude(&Include{
		Src:             src,
		Alt:             decodeAttr(t.attr[attrAlt]),
		OnErrorContinue: strings.EqualFold(decodeAttr(t.attr[attrOnError]), "continue"),
		CacheControl:    decodeAttr(t.attr[attrCacheControl]),
		CacheTag:        decodeAttr(t.attr[attrCacheTag]),
		AsVar:           isTrue(decodeAttr(t.attr[attrAsVar])),
		Combine:         decodeAttr(t.attr[attrCombine]),
	})
	return end
}

func (p *parser) addInclude(inc *Include) {
	p.doc.Segments = append(p.doc.Segments, Segment{Include: inc})
	p.doc.Includes++
}

func (p *parser) inline(i, hi int, t *tag) int {
	bodyStart, bodyEnd, end := t.end, t.end, t.end
	if !t.selfClose {
		cs := p.find(patInline, t.end, hi)
		if cs < 0 {
			p.stats.Malformed++
			p.drop(i, t.end)
			return t.end
		}
		bodyEnd, end = cs, p.closeTag("inline", cs, hi)
	}
	name := decodeAttr(t.attr[attrName])
	if name == "" || p.doc.Includes >= p.max {
		// The body stays, as markup: scanning resumes in it, and its
		// closer is then a stray one.
		p.stats.Malformed++
		p.drop(i, bodyStart)
		return bodyStart
	}
	p.drop(i, end)
	p.addInclude(&Include{
		Src:          name,
		CacheControl: decodeAttr(t.attr[attrCacheControl]),
		CacheTag:     decodeAttr(t.attr[attrCacheTag]),
		AsVar:        isTrue(decodeAttr(t.attr[attrAsVar])),
		Combine:      decodeAttr(t.attr[attrCombine]),
		Inline:       p.body[bodyStart:bodyEnd:bodyEnd],
	})
	return end
}

func (p *parser) remove(i, hi int, t *tag) int {
	if t.selfClose {
		p.drop(i, t.end)
		return t.end
	}
	cs := p.find(patRemove, t.end, hi)
	if cs < 0 {
		p.stats.Malformed++
		p.drop(i, t.end)
		return t.end
	}
	if indexFold(p.body[t.end:cs], "<esi:remove") >= 0 {
		p.stats.Malformed++ // nested: the removal ends at the first closer
	}
	end := p.closeTag("remove", cs, hi)
	p.drop(i, end)
	return end
}

func isTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// Known attributes.
const (
	attrSrc = iota
	attrAlt
	attrOnError
	attrCacheControl
	attrCacheTag
	attrAsVar
	attrCombine
	attrName
	attrCount
)

var attrNames = [attrCount]string{"src", "alt", "onerror", "cache-control", "cache-tag", "as-var", "combine", "name"}

// tag is a parsed start tag; attr holds raw values of known attributes.
type tag struct {
	name      string // lower-case element name for known elements
	end       int    // index after '>'
	selfClose bool
	attr      [attrCount][]byte
	seen      [attrCount]bool
}

// parseTag parses "<esi:name attrs… [/]>" at i. On failure stop is where
// the scanner gave up (> i); the bytes before it pass through as literal.
func (p *parser) parseTag(i, hi int) (t tag, ok bool, stop int) {
	b := p.body
	pos := i + 5
	ns := pos
	for pos < hi && isNameChar(b[pos]) && pos-i < maxTag {
		pos++
	}
	if pos == ns {
		return t, false, pos
	}
	t.name = elementName(b[ns:pos])
	for {
		for pos < hi && isSpace(b[pos]) {
			pos++
		}
		if pos >= hi || pos-i >= maxTag {
			return t, false, min(pos, hi)
		}
		switch c := b[pos]; {
		case c == '>':
			t.end = pos + 1
			return t, true, t.end
		case c == '/':
			if pos+1 < hi && b[pos+1] == '>' {
				t.selfClose, t.end = true, pos+2
				return t, true, t.end
			}
			return t, false, pos + 1
		case !isNameChar(c):
			return t, false, pos
		}
		as := pos
		for pos < hi && isNameChar(b[pos]) && pos-i < maxTag {
			pos++
		}
		an := b[as:pos]
		for pos < hi && isSpace(b[pos]) {
			pos++
		}
		var val []byte
		if pos < hi && b[pos] == '=' {
			pos++
			for pos < hi && isSpace(b[pos]) {
				pos++
			}
			var vok bool
			val, pos, vok = p.attrValue(pos, hi)
			if !vok {
				return t, false, pos
			}
		}
		t.set(an, val)
	}
}

// attrValue reads a quoted or unquoted value at pos. On failure the
// returned position is where scanning stopped.
func (p *parser) attrValue(pos, hi int) ([]byte, int, bool) {
	b := p.body
	if pos >= hi {
		return nil, hi, false
	}
	if q := b[pos]; q == '"' || q == '\'' {
		lim := min(hi, pos+1+maxAttrValue)
		for k := pos + 1; k < lim; k++ {
			switch b[k] {
			case q:
				return b[pos+1 : k], k + 1, true
			case '<':
				return nil, k, false
			}
		}
		return nil, lim, false
	}
	start := pos
	lim := min(hi, pos+maxAttrValue)
	for pos < lim && !isSpace(b[pos]) && b[pos] != '>' && b[pos] != '<' {
		pos++
	}
	if pos == lim && lim < hi || pos < hi && b[pos] == '<' {
		return nil, pos, false
	}
	if pos < hi && b[pos] == '>' && pos > start && b[pos-1] == '/' {
		pos-- // "src=/x/>": the slash self-closes the tag
	}
	return b[start:pos], pos, true
}

// set records a known attribute; the first occurrence wins.
func (t *tag) set(name, val []byte) {
	for k, n := range attrNames {
		if !t.seen[k] && len(name) == len(n) && hasPrefixFold(name, n) {
			t.attr[k], t.seen[k] = val, true
			return
		}
	}
}

func elementName(n []byte) string {
	for _, k := range [...]string{"include", "inline", "remove", "comment"} {
		if len(n) == len(k) && hasPrefixFold(n, k) {
			return k
		}
	}
	return "other"
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':' || c == '.'
}

// hasPrefixFold reports whether b starts with the lower-case ASCII prefix.
func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// indexFold finds a lower-case ASCII pattern starting with '<', ignoring case.
func indexFold(b []byte, pattern string) int {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		if hasPrefixFold(b[i:], pattern) {
			return i
		}
		i++
	}
	return -1
}

// HasMarkup reports whether b contains anything Parse would act on
// ("<esi:", "</esi:" or "<!--esi", in any case).
func HasMarkup(b []byte) bool {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return false
		}
		i += j
		r := b[i:]
		if hasPrefixFold(r, "<esi:") || hasPrefixFold(r, "</esi:") || hasPrefixFold(r, "<!--esi") {
			return true
		}
		i++
	}
	return false
}

// decodeAttr trims whitespace and decodes HTML entities.
func decodeAttr(v []byte) string {
	v = bytes.TrimSpace(v)
	if bytes.IndexByte(v, '&') < 0 {
		return string(v)
	}
	var sb strings.Builder
	sb.Grow(len(v))
	for i := 0; i < len(v); i++ {
		if v[i] != '&' {
			sb.WriteByte(v[i])
			continue
		}
		if r, n := entity(v[i:]); n > 0 {
			sb.WriteRune(r)
			i += n - 1
			continue
		}
		sb.WriteByte('&')
	}
	return strings.TrimSpace(sb.String())
}

// entity decodes the entity at the start of b ("&…;"): rune and length, or 0.
func entity(b []byte) (rune, int) {
	semi := bytes.IndexByte(b[:min(len(b), 12)], ';')
	if semi < 2 {
		return 0, 0
	}
	name := b[1:semi]
	switch string(name) {
	case "amp":
		return '&', semi + 1
	case "quot":
		return '"', semi + 1
	case "lt":
		return '<', semi + 1
	case "gt":
		return '>', semi + 1
	case "apos":
		return '\'', semi + 1
	}
	if name[0] != '#' || len(name) < 2 {
		return 0, 0
	}
	digits, base := name[1:], 10
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	n, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || n == 0 || !utf8.ValidRune(rune(n)) {
		return 0, 0
	}
	return rune(n), semi + 1
}
