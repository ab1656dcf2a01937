package disk

import (
	"os"
	"unsafe"
	"weak"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"golang.org/x/sys/unix"
)

// A hit in RAM on a large body is sent from the tier's file, as nginx
// sends its cache files, when that file holds the very copy RAM holds:
// the tier wrote the file from those entries (write) or built them from
// it (load). The file records them by identity (weak pointers: a file
// never keeps an entry RAM dropped), so a RAM copy newer than the file
// (refreshed, revalidated, not yet written) is never matched to it, and
// whatever unindexes the file (a new copy, a purge, an eviction) takes
// the record with it. The file is opened as the one written (its inode,
// size and times); Lend still lends only a file a whole read checked.
//
// A hit finds that file by its entry, not by its key (no SHA-256 of the
// key per hit, about 0.13 µs of a 30 KB hit's 8.4): the index keeps each
// indexed file under the addresses of the entries it holds (ties), and
// drops them with the file. An address only finds the candidate; the
// weak pointer decides: an entry collected and its address reused by a
// new one never matches (its weak pointer is nil by then).

// tie records that f holds entries' bodies, and which file it is (id,
// zero: unknown, and then nothing is sent from it).
func (f *file) tie(entries []*cache.Entry, id *ident) {
	if id.ino == 0 || id.size != f.size {
		return
	}
	from := make([]weak.Pointer[cache.Entry], len(entries))
	for i, e := range entries {
		from[i] = weak.Make(e)
	}
	at := make([]uintptr, len(entries))
	for i, e := range entries {
		at[i] = addrOf(e)
	}
	f.from = &tied{entries: from, at: at, id: *id}
}

// tied is the RAM copies a file holds, and which file it is.
type tied struct {
	entries []weak.Pointer[cache.Entry]
	at      []uintptr // the entries' addresses, its keys in Tier.ties
	id      ident
}

// addrOf is e's address, which keeps nothing alive (ties).
func addrOf(e *cache.Entry) uintptr { return uintptr(unsafe.Pointer(e)) }

// link indexes f by the entries it holds (ties), as index indexes it
// by name; under the gate.
func (t *Tier) link(f *file) {
	if f.from == nil {
		return
	}
	for _, at := range f.from.at {
		t.ties[at] = f // a later file of the same entries replaces an earlier one
	}
}

// unlink takes f out of ties, as unindex takes it out of the index.
func (t *Tier) unlink(f *file) {
	if f.from == nil {
		return
	}
	for _, at := range f.from.at {
		if t.ties[at] == f {
			delete(t.ties, at)
		}
	}
}

// holds reports whether f was written from e or loaded into it.
func (f *file) holds(e *cache.Entry) bool {
	if f.from == nil {
		return false
	}
	for i := range f.from.entries {
		if f.from.entries[i].Value() == e {
			return true
		}
	}
	return false
}

// FileOf lends e's bodies in the tier's file of key when that file holds
// e's own copy (cache.FileKeeper); nil otherwise. The caller gives the
// lend back once (BodyFile.Close, or its Section's Close).
func (t *Tier) FileOf(key []byte, e *cache.Entry, now int64) *cache.BodyFile {
	t.gate.RLock()
	defer t.gate.RUnlock()
	f := t.ties[addrOf(e)]
	if f == nil || f.key != string(key) || !f.holds(e) {
		return nil
	}
	h := t.held(f, now)
	if h == nil {
		var name [nameLen]byte
		copy(name[:], f.name)
		if h = t.open(f, name[:], &f.from.id); h == nil {
			return nil
		}
	}
	for _, v := range h.obj.Variants {
		if v.Variant == e.Variant && sameLengths(v.File, e) {
			t.stats.sent.Add(1)
			return v.File
		}
	}
	h.Release()
	return nil
}

// sameLengths reports whether b's bodies are as long as e's: a file
// tied to e holds the same bytes, so any difference is a bug to fall
// back from, not to send.
func sameLengths(b *cache.BodyFile, e *cache.Entry) bool {
	return b.Body.Len == int64(len(e.Body)) && b.Gzip.Len == int64(len(e.Gzip)) && b.Brotli.Len == int64(len(e.Brotli))
}

// fstatIdent is what fstat says of f; zero when it fails.
func fstatIdent(f *os.File) ident {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return ident{}
	}
	return identOf(&st)
}

// renamedIdent is the file at path when it is still the one written (pre,
// before its rename, which changes its ctime): the same inode, size and
// modification time; zero otherwise (another process sharing the
// directory renamed its own over it).
func renamedIdent(path string, pre ident) ident {
	var st unix.Stat_t
	if pre.ino == 0 || unix.Stat(path, &st) != nil {
		return ident{}
	}
	id := identOf(&st)
	if id.ino != pre.ino || id.size != pre.size || id.mtime != pre.mtime {
		return ident{}
	}
	return id
}

var _ cache.FileKeeper = (*Tier)(nil)
