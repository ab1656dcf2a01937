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

// takeResponse gives e, whose Body is set, what an entry keeps of resp
// besides its bodies: status, lifetime (d's, from now), fields, validators
// and the Vary its compressed copies (set before) add to. Connection-named
// and hop-by-hop fields are left out.
func takeResponse(e *cache.Entry, s *site, resp *fasthttp.Response, d *policy.Decision, now int64) {
	e.Status, e.Tally = resp.StatusCode(), &s.state.tally
	setTimes(e, d, resp.Header.Peek("Age"), now)
	compressed := e.Gzip != nil || e.Brotli != nil
	named := resp.Header.Peek("Connection")
	for k, v := range resp.Header.All() {
		if listed(named, k) {
			continue // a hop-by-hop field the Connection header names
		}
		switch s.classify(k) {
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
	if head := storedHead(e); head != nil {
		e.Head = head
	}
}

func setTimes(e *cache.Entry, d *policy.Decision, age []byte, now int64) {
	e.Stored = now
	e.InitialAge = parseAge(age)
	e.FreshUntil = now + int64(d.TTL)
	e.StaleUntil = e.FreshUntil + int64(d.StaleWhileRevalidate)
	e.ErrorUntil = e.FreshUntil + int64(d.StaleIfError)
	e.MustRevalidate, e.Shared = d.MustRevalidate, d.Shared
	e.KeepUntil = 0
	if d.Keep > 0 {
		e.KeepUntil = max(e.StaleUntil, e.ErrorUntil) + int64(d.Keep)
	}
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
	case bytes.EqualFold(k, []byte("Date")):
		e.Date = bytes.Clone(v)
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

// mergeStored writes into h the response an entry was made of (its
// fields, validators, type) with the fields of a 304 over them: RFC 9111
// 3.2 updates every stored field from the 304 but Content-Length, and
// Content-Encoding stays (the stored bodies were coded by the cache).
func mergeStored(h *fasthttp.ResponseHeader, e *cache.Entry, notModified *fasthttp.ResponseHeader) {
	for _, list := range [][]cache.Field{e.Header, e.Internal} {
		for _, f := range list {
			h.AddBytesKV(f.Name, f.Value)
		}
	}
	for name, v := range map[string][]byte{"ETag": e.ETag, "Last-Modified": e.LastModified, "Content-Type": e.ContentType, "Date": e.Date} {
		if len(v) > 0 {
			h.SetBytesV(name, v)
		}
	}
	named := notModified.Peek("Connection")
	replaced := map[string]bool{}
	for k, v := range notModified.All() {
		if classify(k) == headerDrop || listed(named, k) || bytes.EqualFold(k, []byte("Content-Encoding")) {
			continue
		}
		if name := string(bytes.ToLower(k)); !replaced[name] {
			replaced[name] = true
			h.DelBytes(k)
		}
		h.AddBytesKV(k, v)
	}
}
