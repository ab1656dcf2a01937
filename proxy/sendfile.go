package proxy

import (
	"bytes"
	"io"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"github.com/ramjet-proxy/ramjet/proxy/conns"
	"github.com/valyala/fasthttp"
)

// A hit from the disk tier on a plain HTTP/1.1 connection is sent as
// nginx sends its cache files: the tier lends the copy with its bodies
// left in the file (cache.Lender), and the answer sends the body from the
// file with the socket's sendfile — no copy into the heap, none into RAM.
// The tier keeps the file open for the next hits and lends it to many
// answers at once: each sends from its own offset (cache.Section,
// conns.Conn.SendFile). TLS, HTTP/2 and HTTP/3 write their own frames
// from memory, a range is cut from memory, and an ESI page is assembled
// from its parse: those fetch the copy into RAM as before
// (cache.Fetcher), and so does anything but a fresh hit (a stale copy to
// refresh or revalidate is kept by what follows lookup).

// sendsFiles reports whether the request's answer may send its body from
// a file: a GET on a plain HTTP/1.1 connection, a page's or one the
// connection's own goroutine answers inline (package h1; an HTTP/2
// stream's stand-in connection has no sendfile).
func (r *request) sendsFiles() bool {
	if (r.kind != kindPage && r.kind != kindInline) || r.tls || !r.req.Header.IsGet() {
		return false
	}
	if len(peekCanonical(&r.req.Header, "Range")) > 0 {
		return false
	}
	_, ok := r.ctx.Conn().(io.ReaderFrom) // the socket's own, to sendfile: not TLS's, not a stream's
	return ok
}

// find looks the request's copy up (look); disk: it may wait for the disk
// tier's, lent when its answer can send a body from a file.
func (r *request) find(disk bool) (*cache.Entry, found) {
	if !r.sendsFiles() {
		return r.look(disk, false)
	}
	if !disk { // an inline hit: from RAM, its body from the tier's file that holds it
		e, how := r.look(false, false)
		r.findFile(e, how)
		return e, how
	}
	e, how := r.look(true, true)
	lent := r.lent
	if lent == nil {
		r.findFile(e, how)
		return e, how
	}
	r.lent = nil
	if how == foundFresh && e.File != nil {
		e.File.Answered() // a hit from disk: the one lend that answers (cache.LendCounter)
		// The answer sends from the file and closes it (bodyFile); one
		// that never reaches serve gives it back at reset.
		r.file, r.filed = e.File, e
		return e, how
	}
	lent.Variants[0].File.Close()
	// Not a fresh hit on the copy lent: as before, from RAM.
	r.handoff = handoff{}
	return r.look(true, false)
}

// fromDisk is the disk tier's copy of what RAM does not hold: lent when
// lend, and the tier can; else brought back into RAM.
func (r *request) fromDisk(lend bool) *cache.Object {
	if lend {
		if o := r.s.cache.Lend(r.key); o != nil {
			r.lent = o
			return o
		}
	}
	return r.s.cache.Fetch(r.h, r.key)
}

// sendFile makes the body picked (enc) of a lent entry the answer's,
// from its file: at its own offset, as another answer may be sending
// from the same descriptor, and with the connection's sendfile
// (conns.Conn.SendFile) after the head, which is flushed first.
func sendFile(ctx *fasthttp.RequestCtx, f *cache.BodyFile, enc []byte) {
	s := f.Body
	switch {
	case bytes.Equal(enc, encBrotli):
		s = f.Brotli
	case bytes.Equal(enc, encGzip):
		s = f.Gzip
	}
	to, _ := ctx.Conn().(cache.FileSender)
	if a, ok := to.(fileAnnouncer); ok {
		a.WriteFile() // the head waits to leave with the body
	}
	resp := &ctx.Response
	resp.SetBodyStream(f.Open(s, to), int(s.Len)) // fasthttp closes it once sent
	resp.ImmediateHeaderFlush = to != nil         // the head before the sendfile
}

// fileAnnouncer is conns.Conn's WriteFile.
type fileAnnouncer interface{ WriteFile() }

var (
	_ cache.FileSender = (*conns.Conn)(nil)
	_ fileAnnouncer    = (*conns.Conn)(nil)
)
