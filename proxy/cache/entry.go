package cache

import "time"

// Field is one pre-serialised response header: canonical name and value,
// ready to be written as is on a hit.
type Field struct {
	Name  []byte
	Value []byte
}

// Entry is one stored response variant. It is immutable once stored.
type Entry struct {
	// Variant is the serialised vary values of the request that stored
	// it, each followed by a NUL (NULs only: the plain variant, which a
	// full object never drops); empty when the response does not vary.
	Variant string
	Status  int
	// Header holds the headers written on every hit, without hop-by-hop,
	// content-length/-encoding, Date, Age, Set-Cookie or internal headers.
	Header []Field
	// Internal holds the application's cache-control headers (tags, LSCache
	// control), written only when a site asks for debug headers.
	Internal []Field
	// ETag and ETagWeak are the validator for the identity body and for the
	// compressed bodies (a compressed body is not byte-identical, so its
	// strong validator becomes weak).
	ETag, ETagWeak []byte
	LastModified   []byte
	// Date is the response's Date, kept for If-Modified-Since against a
	// response without Last-Modified (RFC 9111 4.3.2).
	Date []byte
	// Head is Header and Date made ready by the entry's owner to be
	// copied on a hit (the proxy's: a *fasthttp.ResponseHeader); nil
	// writes Header field by field.
	Head any
	// ContentType is kept apart because fasthttp treats it specially.
	ContentType []byte
	Body        []byte
	Gzip        []byte // nil when not compressed
	Brotli      []byte // nil when not compressed
	Tags        []string
	// Doc is the body pre-parsed by its owner (an ESI document), so that
	// a hit does no scanning; nil for plain bodies.
	Doc any
	// tags are the purge states of Tags, interned on insert.
	tags []*tagState
	// Tally, when set, counts the entry while it is stored.
	Tally *Tally
	// pop counts the requests for it, shared with the entries of its
	// variant it replaces and that replace it (popularity.go); given on
	// insert.
	pop *Popularity

	// Times are unix nanoseconds.
	//
	// Born is when the fill that produced the entry started: a purge after
	// it invalidates the entry even if the entry was inserted later (the
	// response may predate the purge). Zero means Stored.
	Born       int64
	Stored     int64
	InitialAge int64 // seconds of Age the origin reported
	FreshUntil int64
	// StaleUntil ends the window in which a stale copy is served while one
	// request revalidates; ErrorUntil the window in which it is served
	// because the origin failed.
	StaleUntil int64
	ErrorUntil int64
	// KeepUntil ends the window in which a copy past every other window is
	// still kept, to be revalidated with its validators (a 304 keeps its
	// body) rather than fetched again; 0 keeps none.
	KeepUntil int64
	// MustRevalidate: once not fresh, the entry is never served without a
	// successful revalidation — not stale, not after a soft purge, not
	// when the origin fails (must-revalidate, proxy-revalidate, s-maxage,
	// no-cache; RFC 9111 4.2.4).
	MustRevalidate bool
	// Shared: may answer a request with Authorization (the response said
	// public, s-maxage or must-revalidate; RFC 9111 3.5).
	Shared bool
	// File: the bodies are in a file, not in Body, Gzip and Brotli (which
	// are then empty, and non-nil where the file holds that copy): an
	// entry the lower tier lent for one answer (Lend), never stored.
	File *BodyFile
}

// Fresh reports whether e may be served without revalidation at now.
func (e *Entry) Fresh(now int64) bool { return now < e.FreshUntil }

// Servable reports whether e may be served stale while revalidating.
func (e *Entry) Servable(now int64) bool { return now < e.StaleUntil }

// ServableOnError reports whether e may be served because the origin failed.
func (e *Entry) ServableOnError(now int64) bool { return now < e.ErrorUntil }

// Age is the RFC 9111 current age in whole seconds.
func (e *Entry) Age(now int64) int64 {
	return e.InitialAge + (now-e.Stored)/int64(time.Second)
}

// Size is the number of bytes e holds, as charged against the cache size.
func (e *Entry) Size() int {
	n := entryOverhead + len(e.Variant) + len(e.Body) + len(e.Gzip) + len(e.Brotli) +
		len(e.ETag) + len(e.ETagWeak) + len(e.LastModified) + len(e.Date) + len(e.ContentType)
	fields := 0
	for _, f := range e.Header {
		fields += len(f.Name) + len(f.Value) + fieldOverhead
	}
	n += fields
	if e.Head != nil { // the same fields again, and the header's own slices
		n += headOverhead + fields + len(e.Date)
	}
	for _, f := range e.Internal {
		n += len(f.Name) + len(f.Value) + fieldOverhead
	}
	for _, t := range e.Tags {
		n += len(t) + 16
	}
	return n
}

// expires is when e can no longer be served in any way.
func (e *Entry) expires() int64 {
	return max(e.FreshUntil, e.StaleUntil, e.ErrorUntil, e.KeepUntil)
}

// Overheads approximate Go's bookkeeping so the byte bound holds for RSS.
const (
	entryOverhead  = 320
	fieldOverhead  = 48
	headOverhead   = 512
	objectOverhead = 160
)
