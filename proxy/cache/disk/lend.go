package disk

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
	"golang.org/x/sys/unix"
)

// Lending is how a hit from disk is sent as nginx sends its cache files:
// the file's head (status, headers, validators, times) is read, its
// bodies stay in the file, and the answer sends the one it picked from
// there (sendfile) rather than copying the file into the heap, checking
// it and copying it again into RAM and the socket. The file stays open
// with its parsed head for the next hits (held.go).
//
// The checksum covers the whole file, bodies included, so a file is lent
// only once a whole read checked it in this process (Fetch: the first
// hit on it reads it whole) and only while it is that very file: same
// inode, size, modification and change times as when it was checked. A
// file replaced (a new copy is a new inode), rewritten or truncated since
// is read whole again, and dropped when damaged. A file truncated while
// it is being sent sends short: the server then closes the connection
// rather than answer with fewer bytes than its Content-Length.

// ident is what fstat says of a file: any change to it changes one of them.
type ident struct {
	ino, size, mtime, ctime int64
}

func identOf(st *unix.Stat_t) ident {
	return ident{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// fstatID is what fstat says of the open file fd.
func fstatID(fd int) (ident, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return ident{}, err
	}
	return identOf(&st), nil
}

// Lend gives back the copy of key on disk for one answer (it implements
// cache.Lender): its entries with their bodies left in the open file
// (Entry.File), nothing read into or stored in RAM. Nil when the file was
// not checked whole yet, changed since, holds an ESI page (whose parse
// needs the body), a variant of it expired, a purge not yet applied to
// the files covers it, or a newer copy waits for the writer: the caller
// then fetches it (Fetch).
func (t *Tier) Lend(key []byte) *cache.Object {
	var name [nameLen]byte
	nameInto(&name, key)
	t.gate.RLock()
	defer t.gate.RUnlock()
	f := t.files[string(name[:])]
	if f == nil || f.key != string(key) || t.q.has(key) {
		return nil
	}
	checked := f.checked.Load()
	if checked == nil {
		return nil // a kept file FileOf opened is not lent before a whole read checked it
	}
	now := t.c.Now()
	h := t.heldAs(f, checked, now) // the very file checked, not one kept before it
	if h == nil {
		if h = t.open(f, name[:], checked); h == nil {
			return nil
		}
		now = t.c.Now() // the open may have waited on the disk
	}
	for _, e := range h.obj.Variants {
		if e.Expired(now) {
			h.Release()
			t.unhold(f, h) // opened again without it
			return nil
		}
		if t.pending(f.key, e) {
			h.Release()
			return nil // fetched without it; the purge drops the file soon
		}
	}
	t.stats.sent.Add(1) // a hit only once it answers (held.Answered)
	return &h.obj
}

// open opens f's file if it is still checked (as a whole read or its
// write found it), parses its head and keeps it (held.go); it returns it
// with a reference for the caller, or nil when it cannot be lent.
func (t *Tier) open(f *file, name []byte, checked *ident) *held {
	if checked == nil || checked.size != f.size {
		return nil
	}
	fd, err := t.openChecked(name, checked)
	if err != nil {
		return nil
	}
	file := os.NewFile(uintptr(fd), f.name)
	var o object
	if err := skimInto(&o, file, fd, checked.size); err != nil || o.key != f.key || hasDoc(&o) {
		file.Close() //nolint:errcheck // read-only
		return nil
	}
	o.key = f.key
	t.keepServable(&o)
	if len(o.variants) == 0 {
		file.Close() //nolint:errcheck // read-only
		return nil
	}
	h := &held{file: file, id: *checked, owner: f, stats: &t.stats, warmFor: t.warmFor()}
	h.sent.Store(neverSent)
	h.obj = cache.Object{Key: o.key, Vary: o.vary, Variants: o.variants}
	for _, e := range o.variants {
		e.File.FD, e.File.Owner = fd, h
		t.c.InternTags(e) // before any other answer may read it
	}
	h.refs.Store(1) // the caller's
	h.checked.Store(t.c.Now())
	t.keep(f, h)
	return h
}

// openChecked opens the file name if it is still the one checked.
func (t *Tier) openChecked(name []byte, checked *ident) (int, error) {
	var path [pathRoom]byte
	fd, err := openNoAtime(&cpath(&path, t.cfg.Path, name)[0])
	if err != nil {
		return -1, err
	}
	if id, err := fstatID(fd); err != nil || id != *checked {
		unix.Close(fd) //nolint:errcheck // read-only
		return -1, fmt.Errorf("%w: changed since it was checked", ErrCorrupt)
	}
	return fd, nil
}

func hasDoc(o *object) bool {
	for _, d := range o.docs {
		if d {
			return true
		}
	}
	return false
}

// skim reads a file's payload piecemeal for a reader: what the head
// needs, skipping the bodies.
type skim struct {
	file *os.File
	fd   int
	buf  []byte // the bytes read last
	// spare is room for the reads: the head's, then the rest after the
	// bodies (tags and times), in one allocation.
	spare []byte
	at    int64 // the file offset of buf[0]
	end   int64 // the payload's end
}

// chunk is what one read asks for at least: a page's head fits, and
// the room for both reads is one allocation.
const chunk = 2048

// skimInto parses the head of file (its descriptor fd), of the given
// size, into o.
func skimInto(o *object, file *os.File, fd int, size int64) error {
	s := &skim{file: file, fd: fd, spare: make([]byte, chunk+chunk/2)}
	r := reader{alias: true, src: s}
	s.read(&r, 0, chunk)
	head := len(magic) + 8
	if r.err != nil || len(r.b) < head || string(r.b[:len(magic)]) != string(magic) {
		return fmt.Errorf("%w: no header", ErrCorrupt)
	}
	n := binary.LittleEndian.Uint64(r.b[len(magic):])
	if n != uint64(size)-uint64(head)-4 {
		return fmt.Errorf("%w: %d payload bytes, header says %d", ErrCorrupt, size-int64(head)-4, n)
	}
	s.end = int64(head) + int64(n)
	s.buf = s.buf[:min(int64(len(s.buf)), s.end)] // r.b stays a suffix of s.buf (pos)
	r.b = s.buf[head:]
	return r.object(o)
}

// read makes r.b the file from off on, at least want bytes of it where
// the payload has them (s.end 0: not known yet, the file's start).
func (s *skim) read(r *reader, off int64, want int) {
	n := max(want, chunk)
	if s.end > 0 {
		n = int(min(int64(n), s.end-off))
	}
	if n < 0 {
		r.fail("offset")
		return
	}
	// Entries alias the bytes read before: a read takes fresh room.
	var buf []byte
	if n <= len(s.spare) {
		buf, s.spare = s.spare[:n:n], s.spare[n:]
	} else {
		buf = make([]byte, n)
	}
	m, err := readFull(s.fd, buf, off)
	if err != nil {
		r.err = fmt.Errorf("disk: read: %w", err)
		r.b = nil
		return
	}
	s.buf, s.at, r.b = buf[:m], off, buf[:m]
}

// pos is the file offset of r.b[0].
func (s *skim) pos(r *reader) int64 { return s.at + int64(len(s.buf)-len(r.b)) }

// spans records where the entry's three bodies are and skips them.
func (s *skim) spans(r *reader) *cache.BodyFile {
	bf := &cache.BodyFile{File: s.file}
	for _, sp := range []*cache.Span{&bf.Body, &bf.Gzip, &bf.Brotli} {
		n := r.uvarint()
		if r.err != nil {
			return nil
		}
		at := s.pos(r)
		if int64(n) > s.end-at {
			r.fail("body length")
			return nil
		}
		sp.Off, sp.Len = at, int64(n)
		if n <= uint64(len(r.b)) {
			r.b = r.b[n:]
			continue
		}
		s.read(r, at+int64(n), chunk)
	}
	return bf
}

// need makes sure r.b holds n bytes, where the payload has them.
func (r *reader) need(n uint64) {
	s := r.src
	if s == nil || uint64(len(r.b)) >= n || r.err != nil {
		return
	}
	at := s.pos(r)
	if n > uint64(s.end-at) {
		n = uint64(s.end - at)
		if uint64(len(r.b)) >= n {
			return
		}
	}
	s.read(r, at, int(n))
}

// ended reports whether the whole payload was parsed.
func (r *reader) ended() bool {
	if r.src != nil {
		return len(r.b) == 0 && r.src.pos(r) == r.src.end
	}
	return len(r.b) == 0
}

var _ cache.Lender = (*Tier)(nil)
