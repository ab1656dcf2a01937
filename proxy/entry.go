package proxy

import (
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/policy"
)

func unixTime(ns int64) time.Time { return time.Unix(0, ns) }

// readBody reads a body to be stored. complete is false when it is larger
// than limit: body then holds the first bytes read, and the rest is still
// in resp's stream.
func readBody(resp *fasthttp.Response, limit int64) (body []byte, complete bool, err error) {
	if !resp.IsBodyStream() {
		return bytes.Clone(resp.Body()), int64(len(resp.Body())) <= limit, nil
	}
	if cl := resp.Header.ContentLength(); cl > 0 && int64(cl) > limit {
		return nil, false, nil
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(resp.Header.ContentLength(), 512)))
	n, err := buf.ReadFrom(io.LimitReader(resp.BodyStream(), limit+1))
	if err != nil {
		return nil, false, errors.Join(ErrBodyRead, err)
	}
	return buf.Bytes(), n <= limit, nil
}

// newEntry builds the immutable stored form of the fill's response,
// whose body is body, decoded (decodeBody), without Content-Encoding.
func (f *fill) newEntry(body []byte) *cache.Entry {
	resp, d := f.resp, &f.d
	e := &cache.Entry{
		Status: resp.StatusCode(),
		Body:   body,
		Tags:   d.Tags,
		Born:   f.born,
	}
	setTimes(e, d, resp.Header.Peek("Age"), f.now)
	// body is the identity body (decoded by the caller). An ESI page is
	// compressed, if ever, after assembly; a fragment only ever is as part
	// of its page.
	if !d.ESI && !f.fragment {
		compress(f.g, e, resp.Header.ContentType())
	}
	compressed := e.Gzip != nil || e.Brotli != nil
	for k, v := range resp.Header.All() {
		switch classify(k) {
		case headerKeep:
			e.Header = append(e.Header, field(k, v))
		case headerInternal:
			e.Internal = append(e.Internal, field(k, v))
		case headerSpecial:
			setSpecial(e, k, v)
		}
	}
	if vary := mergeVary(resp.Header.Peek("Vary"), compressed); len(vary) > 0 {
		e.Header = append(e.Header, cache.Field{Name: []byte("Vary"), Value: vary})
	}
	e.ETagWeak = weakETag(e.ETag)
	return e
}

func setTimes(e *cache.Entry, d *policy.Decision, age []byte, now int64) {
	e.Stored = now
	e.InitialAge = parseAge(age)
	e.FreshUntil = now + int64(d.TTL)
	e.StaleUntil = e.FreshUntil + int64(d.StaleWhileRevalidate)
	e.ErrorUntil = e.FreshUntil + int64(d.StaleIfError)
}

func parseAge(b []byte) int64 {
	var n int64
	for _, c := range bytes.TrimSpace(b) {
		if c < '0' || c > '9' || n > 1<<40 {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

func field(k, v []byte) cache.Field {
	return cache.Field{Name: bytes.Clone(k), Value: bytes.Clone(v)}
}

func setSpecial(e *cache.Entry, k, v []byte) {
	switch {
	case bytes.EqualFold(k, []byte("Etag")):
		e.ETag = bytes.Clone(v)
	case bytes.EqualFold(k, []byte("Last-Modified")):
		e.LastModified = bytes.Clone(v)
	case bytes.EqualFold(k, []byte("Content-Type")):
		e.ContentType = bytes.Clone(v)
	}
	// Vary is rebuilt by mergeVary.
}

// weakETag is the validator of a compressed body: not byte-identical to
// the identity body, so a strong tag becomes weak (as nginx's gzip does).
func weakETag(etag []byte) []byte {
	if len(etag) == 0 || bytes.HasPrefix(etag, []byte("W/")) {
		return etag
	}
	return append([]byte("W/"), etag...)
}

// compress stores gzip and brotli bodies next to the identity one, once,
// so that hits never compress. A coding that does not shrink is dropped.
func compress(g *generation, e *cache.Entry, contentType []byte) {
	c := g.cfg.Compress
	if len(e.Body) < max(c.MinSize, 1) || !g.compressible(contentType) {
		return
	}
	if c.Gzip {
		if z := fasthttp.AppendGzipBytesLevel(nil, e.Body, fasthttp.CompressDefaultCompression); len(z) < len(e.Body) {
			e.Gzip = z
		}
	}
	if c.Brotli {
		if z := fasthttp.AppendBrotliBytesLevel(nil, e.Body, fasthttp.CompressBrotliDefaultCompression); len(z) < len(e.Body) {
			e.Brotli = z
		}
	}
}

func (g *generation) compressible(contentType []byte) bool {
	mt, _, _ := bytes.Cut(contentType, []byte{';'})
	_, ok := g.types[string(bytes.ToLower(bytes.TrimSpace(mt)))]
	return ok
}

// revalidated is the stale entry refreshed by a 304: same body, headers
// and freshness updated from the 304 (RFC 9111 4.3.4).
func revalidated(stale *cache.Entry, resp *fasthttp.Response, d *policy.Decision, now int64) *cache.Entry {
	e := *stale
	setTimes(&e, d, resp.Header.Peek("Age"), now)
	e.Header = nil
	updated := map[string][]byte{}
	for k, v := range resp.Header.All() {
		// The stored body is the identity body whatever a 304 says.
		if classify(k) == headerKeep && !bytes.EqualFold(k, hdrContentEncoding) {
			updated[string(bytes.ToLower(k))] = v
		}
	}
	for _, f := range stale.Header {
		if v, ok := updated[string(bytes.ToLower(f.Name))]; ok {
			e.Header = append(e.Header, field(f.Name, v))
			delete(updated, string(bytes.ToLower(f.Name)))
			continue
		}
		e.Header = append(e.Header, f)
	}
	for k, v := range resp.Header.All() {
		if _, ok := updated[string(bytes.ToLower(k))]; ok && classify(k) == headerKeep {
			e.Header = append(e.Header, field(k, v))
		}
	}
	return &e
}
