package disk

import (
	"os"
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
	f.from = &tied{entries: from, id: *id}
}

// tied is the RAM copies a file holds, and which file it is.
type tied struct {
	entries []weak.Pointer[cache.Entry]
	id      ident
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
func (t *Tier) FileOf(key []byte, e *cache.Entry) *cache.BodyFile {
	var name [nameLen]byte
	nameInto(&name, key)
	t.gate.RLock()
	defer t.gate.RUnlock()
	f := t.files[string(name[:])]
	if f == nil || f.key != string(key) || !f.holds(e) {
		return nil
	}
	h := t.held(f)
	if h == nil {
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
