package proxy

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// store reads the body of a cacheable response and inserts it into the
// shared cache; a body over the size limit is relayed instead.
func (f *fill) store() result {
	body, instead, ok := f.body(f.fwd)
	if !ok {
		return instead
	}
	e := f.newEntry(body)
	if f.d.ESI && f.s.ESI {
		f.p.parseESI(f.g, e)
		if !f.fragment { // a fragment's includes never read inlines (esiinline.go)
			f.p.storeInlines(f.s, []byte(f.key), f.scope, e, f.now)
		}
	}
	cookies := ownCookies(&f.resp.Header)
	releaseResponse(f.resp)
	vary := varySpec(f.s, &f.d, f.ls)
	e.Variant = string(appendVariant(nil, &f.req.Header, &vary))
	f.s.cache.Insert(f.h, f.key, vary, e)
	f.p.metrics.stored.Inc()
	return result{entry: e, status: storedStatus(f.fwd), stored: true, setCookies: cookies}
}

// newEntry builds the immutable stored form of the fill's response,
// whose body is body, decoded (decodeBody), without Content-Encoding.
func (f *fill) newEntry(body []byte) *cache.Entry {
	e := &cache.Entry{Body: body, Tags: scopedTags(f.scope, f.d.Tags), Born: f.born}
	// body is the identity body (decoded by the caller). An ESI page is
	// compressed, if ever, after assembly; a fragment only ever is as part
	// of its page.
	switch {
	case f.bodies != nil: // a 304's refresh keeps what was stored
		e.Gzip, e.Brotli, e.Doc = f.bodies.Gzip, f.bodies.Brotli, f.bodies.Doc
	case !f.d.ESI && !f.fragment && !f.asCame:
		compress(f.g, e, f.resp.Header.ContentType())
	}
	takeResponse(e, f.s, f.resp, &f.d, f.now)
	return e
}

// sessionAnswer reports whether an answer that has only the site's
// lifetime went to a request with a session cookie: it may be that user's
// own page, so it is not stored for others (Varnish passes every request
// with cookies), unless the site lists its path in DefaultTTLWithCookies.
// The path is the origin's: decoded, dot segments resolved. An answer
// that varies on the whole Cookie header is only ever served to the same
// cookies.
func (f *fill) sessionAnswer() bool {
	if f.s.cookieTTL.match(f.req.URI().Path()) {
		return false
	}
	vary := varySpec(f.s, &f.d, f.ls)
	return !slices.Contains(vary.Headers, "cookie") && sessionCookie(&f.req.Header, vary.Cookies, f.s.anonymous)
}

// storePrivate keeps an LSCache private response for its user only, with
// its tags in the user's namespace.
func (f *fill) storePrivate() result {
	body, instead, ok := f.body(fwdMiss)
	if !ok {
		return instead
	}
	e := f.newEntry(body)
	e.Tags = privateTags(f.id, f.scope, f.d.Tags)
	if f.d.ESI && f.s.ESI {
		f.p.parseESI(f.g, e)
	}
	vary := varySpec(f.s, &f.d, f.ls)
	e.Variant = string(appendVariant(nil, &f.req.Header, &vary))
	cookies := ownCookies(&f.resp.Header)
	releaseResponse(f.resp)
	pkey := appendPrivateKey(nil, f.id, []byte(f.key))
	f.p.private.Insert(f.p.private.Hash(pkey), string(pkey), vary, e)
	f.p.privateUsed.Store(true)
	f.p.metrics.storedPrivate.Inc()
	return result{entry: e, status: csStoredPrivate, setCookies: cookies}
}

// body reads the body to store, decoded: a stored body is always the
// identity body (decode.go). When it cannot (ok false), instead is the
// answer: the error, or the response to relay as it came, with what was
// read of it, when it is over the size limit or in a coding ramjet cannot
// undo (a fragment's fails instead: its page cannot use it).
func (f *fill) body(fwd string) (body []byte, instead result, ok bool) {
	body, complete, err := readBody(f.resp, f.g.cfg.MaxObjectSize)
	switch {
	case err != nil:
		releaseResponse(f.resp)
		return nil, result{err: fmt.Errorf("proxy: fill %s: %w", f.key, err)}, false
	case !complete:
		f.p.metrics.notStored.Inc()
		return nil, result{resp: f.resp, prefix: body, status: missStatus(fwd, "too-large")}, false
	}
	decoded, err := decodeBody(body, f.resp.Header.ContentEncoding(), f.g.cfg.MaxObjectSize)
	switch {
	case err != nil && f.fragment:
		releaseResponse(f.resp)
		return nil, result{err: fmt.Errorf("proxy: fill %s: %w", f.key, err)}, false
	case err != nil && !(f.d.ESI && f.s.ESI):
		// Nothing in it for ramjet to read: stored as it came, with its
		// Content-Encoding, as any cache would (RFC 9111 3).
		f.asCame = true
		return body, result{}, true
	case err != nil:
		f.p.metrics.notStored.Inc()
		f.p.log.Info("not stored: body ramjet cannot decode", "key", f.key, "err", err)
		return nil, result{resp: f.resp, prefix: body, status: missStatus(fwd, "undecodable")}, false
	}
	describeDecoded(&f.resp.Header)
	return decoded, result{}, true
}

// describeDecoded makes an origin's headers describe its body decoded:
// no Content-Encoding, and when a coding was undone a strong ETag made
// weak, as it named the coded bytes (nginx's gunzip does the same).
func describeDecoded(h *fasthttp.ResponseHeader) {
	coded := countCodings(h.ContentEncoding()) > 0
	h.Del(fasthttp.HeaderContentEncoding)
	if etag := h.Peek(fasthttp.HeaderETag); coded && len(etag) > 0 && !bytes.HasPrefix(etag, []byte("W/")) {
		h.SetBytesV(fasthttp.HeaderETag, weakETag(etag))
	}
}

// storeRevalidated refreshes the stale copy from a 304: the stored body
// with the stored fields updated by the 304's (RFC 9111 4.3.4), decided
// afresh from the merged response; one the decision refuses to store is
// served this once.
func (f *fill) storeRevalidated() result {
	merged := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(merged)
	mergeStored(&merged.Header, f.stale, &f.resp.Header)
	merged.SetStatusCode(f.stale.Status)
	releaseResponse(f.resp)
	f.resp, f.bodies = merged, f.stale
	in := policyInput(f.req, merged, f.s, f.now)
	f.d = policy.Decide(&in)
	e := f.newEntry(f.stale.Body)
	e.Variant = f.stale.Variant
	if !f.d.Store {
		return result{entry: e, status: csValidated}
	}
	f.s.cache.Insert(f.h, f.key, varySpec(f.s, &f.d, f.ls), e)
	f.p.metrics.stored.Inc()
	return result{entry: e, status: csRevalidated, stored: true}
}

// rememberUncacheable marks a key hit-for-miss, so that the next requests
// do not queue behind one another; server errors are not remembered
// (usually transient), nor the misses of private includes (the URL may
// well be cacheable for everyone else).
func (f *fill) rememberUncacheable(code int) {
	if f.g.cfg.HitForPass <= 0 || code >= 500 || f.private ||
		f.d.Reason == policy.ReasonAuthorization || f.d.Reason == policy.ReasonCookie {
		return // an answer for one user's credentials or session says nothing of the URL's
	}
	if f.passUntil-f.now > int64(f.g.cfg.HitForPass)/2 {
		return // marked a moment ago: renewing it on every request costs a store write each
	}
	f.s.cache.MarkPass(f.h, f.key, f.now+int64(f.g.cfg.HitForPass))
}
