package proxy

import (
	"bytes"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/esi"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

// RFC 9211 Cache-Status values, built once.
var (
	csHit           = []byte("ramjet; hit")
	csHitPrivate    = []byte("ramjet; hit; detail=private")
	csStale         = []byte("ramjet; hit; fwd=stale")
	csStaleOnError  = []byte("ramjet; hit; fwd=stale; detail=stale-if-error")
	csStored        = []byte("ramjet; fwd=miss; stored")
	csStoredPrivate = []byte("ramjet; fwd=miss; stored; detail=private")
	csCollapsed     = []byte("ramjet; fwd=miss; collapsed")
	csRevalidated   = []byte("ramjet; fwd=stale; fwd-status=304; stored")
	csValidated     = []byte("ramjet; fwd=stale; fwd-status=304")
	csBypass        = []byte("ramjet; fwd=bypass")
	csMethod        = []byte("ramjet; fwd=method")
	csBody          = []byte("ramjet; fwd=bypass; detail=request-body")
	csHitForPass    = []byte("ramjet; fwd=uri-miss")

	hdrCacheStatus     = []byte("Cache-Status")
	hdrAge             = []byte("Age")
	hdrETag            = []byte("ETag")
	hdrLastModified    = []byte("Last-Modified")
	hdrContentEncoding = []byte("Content-Encoding")
	encGzip            = []byte("gzip")
	encBrotli          = []byte("br")
)

// serve writes an entry: assembled when it is an ESI page, else as stored.
func (r *request) serve(e *cache.Entry, now int64, status []byte) {
	doc, ok := e.Doc.(*esi.Document)
	if !ok {
		serveEntryFrom(r.ctx, r.s, e, r.bodyFile(e), now, status)
		return
	}
	r.serveAssembled(e, doc, now, status)
}

// serveEntry writes a stored response. It allocates nothing: headers are
// pre-serialised, the body is written from the entry without a copy.
func serveEntry(ctx *fasthttp.RequestCtx, s *site, e *cache.Entry, now int64, status []byte) {
	serveEntryFrom(ctx, s, e, e.File, now, status)
}

// serveEntryFrom is serveEntry with e's bodies sent from file when it is
// not nil (ramfile.go, sendfile.go): only the body's bytes come from there.
func serveEntryFrom(ctx *fasthttp.RequestCtx, s *site, e *cache.Entry, file *cache.BodyFile, now int64, status []byte) {
	resp := &ctx.Response
	h := &resp.Header
	// First: copying the stored head replaces the whole header (head.go).
	head, _ := e.Head.(*fasthttp.ResponseHeader)
	if head != nil {
		head.CopyTo(h)
	}
	body, etag, enc := pickEncoding(peekCanonical(&ctx.Request.Header, "Accept-Encoding"), e)
	if notModified(&ctx.Request.Header, e, etag) {
		resp.SetStatusCode(fasthttp.StatusNotModified)
		if file != nil {
			file.Close()
		}
	} else {
		resp.SetStatusCode(e.Status)
		if file != nil {
			sendFile(ctx, file, enc)
		} else if start, n, ok := answerRange(&ctx.Request.Header, resp, etag, e.LastModified, int64(len(body))); ok {
			resp.SetBodyRaw(body[start : start+n])
		} else {
			resp.SetBodyRaw(body)
		}
		if len(e.ContentType) > 0 {
			resp.Header.SetContentTypeBytes(e.ContentType)
		}
		if enc != nil {
			resp.Header.SetCanonical(hdrContentEncoding, enc)
		}
	}
	// Stored names are canonical (normalised when the upstream's answer
	// was parsed): adding them skips fasthttp's normalising of each name.
	h.DisableNormalizing()
	if head == nil {
		for i := range e.Header {
			h.AddBytesKV(e.Header[i].Name, e.Header[i].Value)
		}
	}
	if s.DebugHeaders {
		for i := range e.Internal {
			h.AddBytesKV(e.Internal[i].Name, e.Internal[i].Value)
		}
	}
	h.EnableNormalizing()
	if len(etag) > 0 {
		h.SetCanonical(hdrETag, etag)
	}
	if len(e.LastModified) > 0 {
		h.SetCanonical(hdrLastModified, e.LastModified)
	}
	var age [20]byte
	h.SetCanonical(hdrAge, strconv.AppendInt(age[:0], max(e.Age(now), 0), 10))
	h.SetCanonical(hdrCacheStatus, status)
	if !s.LSCacheHeader {
		return
	}
	if ls := lsCacheValue(status); ls != nil {
		h.SetCanonical(hdrLiteSpeedCache, ls) // a constant: nothing allocated
	}
}

// pickEncoding chooses the stored body the client accepts best: br, then
// gzip, then identity.
func pickEncoding(accept []byte, e *cache.Entry) (body, etag, enc []byte) {
	if len(accept) > 0 {
		if e.Brotli != nil && accepts(accept, encBrotli) {
			return e.Brotli, e.ETagWeak, encBrotli
		}
		if e.Gzip != nil && accepts(accept, encGzip) {
			return e.Gzip, e.ETagWeak, encGzip
		}
	}
	return e.Body, e.ETag, nil
}

// accepts reports whether an Accept-Encoding value allows coding (a
// listed coding or "*", without q=0).
func accepts(header, coding []byte) bool {
	for len(header) > 0 {
		var item []byte
		item, header = cutItem(header, ',')
		name, params, _ := bytes.Cut(item, []byte{';'})
		name = bytes.TrimSpace(name)
		if !bytes.EqualFold(name, coding) && !(len(name) == 1 && name[0] == '*') {
			continue
		}
		return !qZero(params)
	}
	return false
}

// qZero reports whether parameters carry q=0 (q=0, q=0.0, q=0.000).
func qZero(params []byte) bool {
	i := bytes.Index(params, []byte("q="))
	if i < 0 {
		return false
	}
	v := bytes.TrimSpace(params[i+2:])
	if len(v) == 0 || v[0] != '0' {
		return false
	}
	for _, c := range v[1:] {
		if c != '.' && c != '0' {
			return c == ' ' || c == ';'
		}
	}
	return true
}

// notModified evaluates the client's conditional GET against the entry
// (RFC 9110 13.2.2: If-None-Match wins over If-Modified-Since).
func notModified(h *fasthttp.RequestHeader, e *cache.Entry, etag []byte) bool {
	if e.Status != fasthttp.StatusOK {
		return false
	}
	if inm := peekCanonical(h, "If-None-Match"); len(inm) > 0 {
		return len(etag) > 0 && etagListMatches(inm, etag)
	}
	ims := peekCanonical(h, "If-Modified-Since")
	if len(ims) == 0 {
		return false
	}
	// Without a Last-Modified the stored Date stands in (RFC 9111 4.3.2).
	modifiedAt := e.LastModified
	if len(modifiedAt) == 0 {
		modifiedAt = e.Date
	}
	if len(modifiedAt) == 0 {
		return false
	}
	if bytes.Equal(ims, modifiedAt) {
		return true
	}
	since, ok1 := policy.ParseHTTPDate(ims)
	modified, ok2 := policy.ParseHTTPDate(modifiedAt)
	return ok1 && ok2 && !modified.After(since)
}

// etagListMatches is the weak comparison of If-None-Match.
func etagListMatches(list, etag []byte) bool {
	etag = bytes.TrimPrefix(etag, []byte("W/"))
	for len(list) > 0 {
		var item []byte
		item, list = cutItem(list, ',')
		item = bytes.TrimSpace(item)
		if len(item) == 1 && item[0] == '*' {
			return true
		}
		if bytes.Equal(bytes.TrimPrefix(item, []byte("W/")), etag) {
			return true
		}
	}
	return false
}
