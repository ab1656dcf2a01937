package proxy

import "github.com/ramjet-proxy/ramjet/proxy/cache"

// A fresh hit in RAM whose chosen body (identity, or the stored gzip or
// br copy the client accepts) is large is sent as a hit from the disk
// tier is, when the tier's file holds that very copy (cache.FileKeeper):
// the RAM entry's own head, written by serveEntry as for any RAM hit,
// then the body with sendfile from the file. Copying a 30 KB body from
// the heap into the socket is a quarter of such a hit's CPU; nginx sends
// its cache file from the page cache. A file written from an older or
// newer copy, none, or a small body: the body is copied from RAM as
// before. Same conditions as the disk tier's sendfile (sendsFiles).

// ramFileMin is the smallest chosen body sent from the file: below it,
// the copy costs less than the sendfile's system call and the file's
// lookup (docs/performance.md).
const ramFileMin = 16 << 10

// findFile lends the disk tier's file of e, a fresh copy in RAM the
// answer may send from a file (find), when its chosen body is large.
func (r *request) findFile(e *cache.Entry, how found) {
	// A compressed copy is stored only when smaller than the identity
	// body: a small one rules the hit out before the Accept-Encoding.
	if how != foundFresh || len(e.Body) < ramFileMin || e.File != nil || e.Doc != nil {
		return
	}
	body, _, _ := pickEncoding(peekCanonical(&r.req.Header, "Accept-Encoding"), e)
	if len(body) < ramFileMin {
		return
	}
	if f := r.s.cache.FileOf(r.key, e, r.now); f != nil {
		r.file, r.filed = f, e
	}
}

// bodyFile is the file e's body is sent from: a lent copy's own, or the
// one findFile lent for e (the answer owns it from here; one lent for
// another copy is given back at reset); nil: from RAM.
func (r *request) bodyFile(e *cache.Entry) *cache.BodyFile {
	if f := r.file; f != nil && r.filed == e {
		r.file, r.filed = nil, nil
		return f
	}
	return e.File // nil but for a lent copy (its file: r.file until served)
}
