package proxy

import (
	"bytes"
	"slices"
	"strings"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// headerClass says what the proxy does with an origin response header.
type headerClass int

const (
	headerKeep     headerClass = iota // stored and sent to clients
	headerInternal                    // the application talking to the cache
	headerDrop                        // connection-level, or rewritten by the proxy
	headerOwn                         // this client's only: relayed, never stored (Set-Cookie, Age)
	headerSpecial                     // kept outside the generic list (ETag, Content-Type...)
)

var internalHeaders = []string{
	"X-Litespeed-Cache-Control", "X-Litespeed-Tag", "X-Litespeed-Purge",
	"X-Litespeed-Purge2", "X-Litespeed-Vary", "X-Litespeed-Cache",
	"Surrogate-Key", "Surrogate-Control", "Cache-Tag", "Xkey",
	"Cache-Group-Invalidation",
}

var droppedHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Proxy-Authenticate", "Content-Length",
	"Cache-Status",
}

// ownHeaders are relayed to the client whose request fetched them and
// never stored; RFC 9111 3.1 forbids storing the proxy authentication
// fields.
var ownHeaders = []string{"Set-Cookie", "Age", "Proxy-Authentication-Info", "Proxy-Authorization"}

var specialHeaders = []string{"Etag", "Last-Modified", "Content-Type", "Vary", "Date"}

func classify(name []byte) headerClass {
	switch {
	case foldIn(name, internalHeaders):
		return headerInternal
	case foldIn(name, droppedHeaders):
		return headerDrop
	case foldIn(name, ownHeaders):
		return headerOwn
	case foldIn(name, specialHeaders):
		return headerSpecial
	}
	return headerKeep
}

func foldIn(name []byte, list []string) bool {
	for _, s := range list {
		if len(s) == len(name) && bytes.EqualFold(name, []byte(s)) {
			return true
		}
	}
	return false
}

// peekCanonical is h.Peek for a name already in canonical form
// ("If-None-Match"), without fasthttp's normalising of the name on every
// call (a copy and a pass over it, several per hit; Peek copies and
// checks the name even with normalising off). The names h holds are
// canonical: ramjet never turns normalising off, so they were normalised
// as they were parsed or set, and the lookup finds the same value.
func peekCanonical(h *fasthttp.RequestHeader, name string) []byte {
	// PeekCanonical only compares the name: it reads the string's bytes
	// in place.
	return h.PeekCanonical(unsafe.Slice(unsafe.StringData(name), len(name)))
}

// delCanonical is h.Del for a name already in canonical form, without
// the normalising (as peekCanonical).
func delCanonical(h *fasthttp.RequestHeader, name string) {
	h.DisableNormalizing()
	h.Del(name)
	h.EnableNormalizing()
}

// policyInput gathers what policy.Decide reads from one origin exchange.
// Authorization is the upstream request's: a fill forwards the client's.
// The response's header is walked once (a Peek per field read normalises
// its name and scans every header, which cost an uncacheable PHP answer
// more than its policy).
func policyInput(req *fasthttp.Request, resp *fasthttp.Response, s *site, now int64) policy.Input {
	in := policy.Input{
		Method:         "GET",
		Status:         resp.StatusCode(),
		Authorization:  len(peekCanonical(&req.Header, "Authorization")) > 0,
		DefaultTTL:     s.DefaultTTL,
		Heuristic:      s.Heuristic,
		Grace:          s.Grace,
		CacheSetCookie: s.CacheSetCookie,
	}
	in.Now = unixTime(now)
	var own, cdn []byte // targeted fields: the site's own name's, CDN-Cache-Control
	tags := false
	for k, v := range resp.Header.All() {
		switch string(k) { // as fasthttp keeps them: normalised
		case "Etag":
			in.Validators = true
		case "Last-Modified":
			in.Validators = true
			if in.LastModified == nil {
				in.LastModified = v
			}
		case "Set-Cookie":
			in.SetCookie = true
		case "X-Litespeed-Cache-Control":
			in.LSCacheControl = joinField(in.LSCacheControl, v)
		case "Surrogate-Control":
			in.SurrogateControl = joinField(in.SurrogateControl, v)
		case "Cache-Control":
			in.CacheControl = joinField(in.CacheControl, v)
		case "Expires":
			in.Expires = joinField(in.Expires, v) // two lines make it invalid: expired
		case "Date":
			if in.Date == nil {
				in.Date = v
			}
		case "Age":
			if in.Age == nil {
				in.Age = v
			}
		case "Vary":
			in.Vary = joinField(in.Vary, v)
		case "X-Litespeed-Vary":
			in.LSVary = joinField(in.LSVary, v)
		case "Cdn-Cache-Control":
			cdn = joinField(cdn, v)
		case "X-Litespeed-Tag", "Surrogate-Key", "Cache-Tag", "Xkey":
			tags = true
		}
		if s.targeted != "" && strings.EqualFold(string(k), s.targeted) {
			own = joinField(own, v)
		}
	}
	in.Targeted = own
	if len(own) == 0 {
		in.Targeted = cdn
	}
	if tags { // in this order, as the tag headers' precedence goes
		h := &resp.Header
		for _, name := range []string{"X-Litespeed-Tag", "Surrogate-Key", "Cache-Tag", "Xkey"} {
			in.TagHeaders = append(in.TagHeaders, h.PeekAll(name)...)
		}
	}
	return in
}

// joinField adds a field line's value v to what earlier lines gave, as
// one comma-separated value (RFC 9110 5.3); the first is kept as it is.
func joinField(prev, v []byte) []byte {
	if prev == nil {
		return v
	}
	out := make([]byte, 0, len(prev)+2+len(v))
	return append(append(append(out, prev...), ", "...), v...)
}

// varySpec is what selects a variant of a response: its Vary headers,
// the site's vary cookies, the app's X-LiteSpeed-Vary cookies, and
// LSCache's _lscache_vary cookie unless the response said no-vary.
func varySpec(s *site, d *policy.Decision, ls *lsRules) cache.VarySpec {
	cookies := slices.Concat(s.varyCookies, d.VaryCookies)
	if !d.NoVary {
		cookies = append(cookies, "_lscache_vary")
	}
	headers := slices.Clone(d.VaryHeaders)
	if s.ht != nil {
		// The LiteSpeed rules' named variant (ismobile): stageRewrite
		// sets it on every request of the site, so it keys them all.
		headers = append(headers, varyValueKey)
	}
	if ls != nil {
		cookies = append(cookies, ls.varyCookies...)
	}
	slices.Sort(cookies)
	slices.Sort(headers)
	return cache.VarySpec{Headers: slices.Compact(headers), Cookies: slices.Compact(cookies)}
}

// appendVariant serialises the request values a vary spec selects on.
// It does not allocate when dst has room.
func appendVariant(dst []byte, h *fasthttp.RequestHeader, v *cache.VarySpec) []byte {
	for _, name := range v.Headers {
		dst = appendSelecting(dst, name, h.Peek(name))
		dst = append(dst, 0)
	}
	if len(v.Cookies) == 0 {
		return dst
	}
	for _, name := range v.Cookies {
		dst = append(dst, cookieValue(h, name)...)
		dst = append(dst, 0)
	}
	return dst
}

// appendSelecting appends a selecting request field's value as it keys a
// variant, normalised as RFC 9111 4.1 allows so that equivalent requests
// share one: white space removed; Accept-Language also lower-cased, its
// items in preference order and q=1 left out.
func appendSelecting(dst []byte, name string, v []byte) []byte {
	if name == "accept-language" {
		if out, ok := appendLanguages(dst, v); ok {
			return out
		}
	}
	for _, c := range v {
		if c != ' ' && c != '\t' {
			dst = append(dst, c)
		}
	}
	return dst
}

// language is one Accept-Language item: its tag and quality in
// thousandths.
type language struct {
	tag []byte
	q   int
}

// appendLanguages appends Accept-Language's items sorted by quality
// (stable), lower-cased, q=0 items dropped. It reports false, having
// appended nothing, for more items than it sorts on the stack.
func appendLanguages(dst, v []byte) ([]byte, bool) {
	var items [16]language
	n := 0
	for len(v) > 0 {
		var item []byte
		item, v = cutItem(v, ',')
		tag, params, _ := bytes.Cut(item, []byte{';'})
		if tag = bytes.TrimSpace(tag); len(tag) == 0 {
			continue
		}
		if n == len(items) {
			return dst, false
		}
		items[n] = language{tag: tag, q: quality(params)}
		n++
	}
	for i := 1; i < n; i++ { // insertion sort: stable, and n is small
		for j := i; j > 0 && items[j].q > items[j-1].q; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
	first := true
	for _, l := range items[:n] {
		if l.q == 0 {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		for _, c := range l.tag {
			dst = append(dst, lower(c))
		}
		if l.q < 1000 {
			dst = append(dst, ";q=0."...)
			dst = append(dst, byte('0'+l.q/100), byte('0'+l.q/10%10), byte('0'+l.q%10))
		}
	}
	return dst, true
}

// quality parses a q parameter ("q=0.8") into thousandths; absent or
// invalid is 1000.
func quality(params []byte) int {
	i := bytes.Index(params, []byte("q="))
	if i < 0 {
		return 1000
	}
	v := bytes.TrimSpace(params[i+2:])
	if len(v) == 0 || (v[0] != '0' && v[0] != '1') {
		return 1000
	}
	q := int(v[0]-'0') * 1000
	if len(v) > 1 && v[1] == '.' {
		scale := 100
		for _, c := range v[2:] {
			if c < '0' || c > '9' || scale == 0 {
				break
			}
			q += int(c-'0') * scale
			scale /= 10
		}
	}
	return min(q, 1000)
}

// mergeVary returns the Vary value sent with a stored response: the
// origin's, plus Accept-Encoding when compressed bodies are stored.
func mergeVary(origin []byte, compressed bool) []byte {
	if !compressed || bytes.Contains(bytes.ToLower(origin), []byte("accept-encoding")) {
		return bytes.Clone(origin)
	}
	if len(bytes.TrimSpace(origin)) == 0 {
		return []byte("Accept-Encoding")
	}
	return []byte(strings.TrimSpace(string(origin)) + ", Accept-Encoding")
}

// listed reports whether name is one of the tokens of a comma-separated
// list (a Connection header's), ignoring case.
func listed(list, name []byte) bool {
	for len(list) > 0 {
		var tok []byte
		tok, list = cutItem(list, ',')
		if bytes.EqualFold(bytes.TrimSpace(tok), name) {
			return true
		}
	}
	return false
}

// ownCookies copies the Set-Cookie values of a response that is stored
// without them, so that the client whose request filled it still gets them.
func ownCookies(h *fasthttp.ResponseHeader) [][]byte {
	var cookies [][]byte
	for _, c := range h.PeekAll("Set-Cookie") {
		cookies = append(cookies, bytes.Clone(c))
	}
	return cookies
}

// addCookies gives the client its own cookies after a stored answer.
func addCookies(h *fasthttp.ResponseHeader, cookies [][]byte) {
	for _, c := range cookies {
		h.AddBytesV("Set-Cookie", c)
	}
}
