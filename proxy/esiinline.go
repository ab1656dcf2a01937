package proxy

import (
	"strconv"
	"time"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/esi"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// An <esi:inline name=…> body belongs to the page that carries it. A page
// that reflects what a client sends (a search page) would otherwise let
// anyone store any body as any URL of the site. So inline bodies live in a
// namespace of their own, keyed by the page's key and the name as
// written: no page key starts like an inline key, so an inline is never
// looked up as a page nor replaces one. Only the includes of that same
// page (at its first level) whose src is the inline's name read it, and
// only while the page is the fill that stored it; a page whose inline is
// gone fetches the name as any include (every inline is fetchable, in the
// ESI 1.0 sense: the LiteSpeed Cache plugin names its inlines after the
// ESI URL it includes next). An inline lives no longer than its own
// cache-control says, its page stays fresh, or inlineMaxTTL.

// inlineMaxTTL bounds how long an inline body is kept.
const inlineMaxTTL = 24 * time.Hour

// inlineKeyPrefix starts every inline key. Page keys start with a scheme
// and "://", private keys with 16 hex digits and "|".
const inlineKeyPrefix = "esi:inline "

// appendInlineKey appends the key of the inline named name on the page
// whose key is pageKey. The page key's length goes first, so that no two
// (page, name) pairs share a key.
func appendInlineKey(dst []byte, pageKey []byte, name string) []byte {
	dst = append(dst, inlineKeyPrefix...)
	dst = strconv.AppendInt(dst, int64(len(pageKey)), 10)
	dst = append(dst, ' ')
	dst = append(dst, pageKey...)
	return append(dst, name...)
}

// storeInlines keeps the public inline bodies of a page just stored, each
// under its inline key on the page's site.
func (p *Proxy) storeInlines(s *site, pageKey []byte, scope string, page *cache.Entry, now int64) {
	doc, ok := page.Doc.(*esi.Document)
	if !ok || page.Born == 0 {
		return
	}
	var key []byte
	for _, seg := range doc.Segments {
		inc := seg.Include
		if inc == nil || inc.Inline == nil {
			continue
		}
		until, ok := inlineFreshUntil(inc, page, now)
		if !ok {
			continue
		}
		e := &cache.Entry{Status: 200, Body: inc.Inline, Stored: now, Born: page.Born,
			FreshUntil: until, StaleUntil: until, ErrorUntil: until, Tally: &s.state.tally}
		e.Tags = scopedTags(scope, policy.AppendTags(nil, []byte(inc.CacheTag)))
		key = appendInlineKey(key[:0], pageKey, inc.Src)
		s.cache.Insert(s.cache.Hash(key), string(key), cache.VarySpec{}, e)
	}
}

// inlineFreshUntil is when an inline stored at now stops being fresh: its
// cache-control's lifetime (only public ones with one are kept), bounded
// by its page's freshness and inlineMaxTTL.
func inlineFreshUntil(inc *esi.Include, page *cache.Entry, now int64) (int64, bool) {
	cc := policy.ParseLSCacheControl([]byte(inc.CacheControl))
	ttl := max(cc.MaxAge, cc.SMaxAge)
	if cc.Private || cc.NoCache || cc.NoStore || ttl <= 0 {
		return 0, false
	}
	until := min(now+int64(ttl)*int64(time.Second), page.FreshUntil, now+int64(inlineMaxTTL))
	return until, until > now
}

// pageInlines is what the includes of one page need to read its inlines.
type pageInlines struct {
	s     *site
	key   []byte   // the page's key
	born  int64    // the page's fill: inlines of another fill are not its own
	names []string // of the page's inlines
}

// newPageInlines is the inlines of a page served from e, or nil when it
// has none that may be stored. Only a page request serves a page.
func newPageInlines(r *request, e *cache.Entry, doc *esi.Document) *pageInlines {
	if e.Born == 0 {
		return nil
	}
	var in *pageInlines
	for _, seg := range doc.Segments {
		if inc := seg.Include; inc != nil && inc.Inline != nil {
			if in == nil {
				in = &pageInlines{s: r.s, key: append([]byte(nil), r.key...), born: e.Born}
			}
			in.names = append(in.names, inc.Src)
		}
	}
	return in
}

// body is the stored inline body an include of src gets, if the page has
// an inline of that name and its body is fresh.
func (in *pageInlines) body(src string) ([]byte, bool) {
	if in == nil || !in.has(src) {
		return nil, false
	}
	c := in.s.cache
	key := appendInlineKey(nil, in.key, src)
	o := c.Lookup(c.Hash(key), key)
	if o == nil {
		return nil, false
	}
	e := o.Variant(nil)
	if e == nil || e.Born != in.born || c.Status(e, c.Now()) != cache.Fresh {
		return nil, false
	}
	return e.Body, true
}

func (in *pageInlines) has(name string) bool {
	for _, n := range in.names {
		if n == name {
			return true
		}
	}
	return false
}
