package cache

import (
	"errors"
	"io"
	"os"
	"sync"
)

// A lower tier that is a Lender gives back, for one answer, a copy whose
// bodies stay in its file (Lend): the answer sends the one it picks from
// there (sendfile) instead of the tier reading the file into the heap and
// the cache storing it. Such a copy is never stored in RAM. The tier may
// lend the same copy to many answers at once (it keeps files open with
// their parsed heads): each reads its body at its own offset (Section),
// and gives the lend back once (BodyFile.Close, or the Section's Close).

// Lender is a lower tier that lends copies.
type Lender interface {
	// Lend returns the tier's copy of key with its entries' bodies in an
	// open file (Entry.File), unless a purge covers it; nil when it has
	// none it can lend (the caller then fetches it: Fetcher). The copy
	// is shared and read-only; its entries' tags are interned already
	// (InternTags). The caller gives it back once, by closing one of its
	// entries' File, after Answered when the copy answers the request.
	Lend(key []byte) *Object
}

// LendCounter is a lend's Owner that counts what its lends did, as an
// operator reads them: a copy lent is a hit only once it answers its
// request (a lend refused, say a stale copy fetched instead, is none),
// and a body counts as sent from the file only when the socket's
// sendfile sends it (a 304 sends none).
type LendCounter interface {
	Answered() // a lent copy answers its request: a hit from the lender
	Sending()  // a lent body is sent with sendfile
}

// Answered tells b's lender that its lent copy answers the request, with
// its body or a 304 (LendCounter): once per lend, before it is given back.
func (b *BodyFile) Answered() {
	if c, ok := b.Owner.(LendCounter); ok {
		c.Answered()
	}
}

// Span is where one body is in a file; Len 0: none there.
type Span struct{ Off, Len int64 }

// BodyFile is where a lent entry's bodies are: Body, Gzip and Brotli, in
// File (FD its descriptor), open while its lender's hold on it lasts.
type BodyFile struct {
	File               *os.File
	FD                 int
	Body, Gzip, Brotli Span
	// Owner is given each lend back (Close); nil: closing closes File.
	Owner Releaser
}

// Releaser gives back one lend of a file.
type Releaser interface{ Release() }

// Close gives back the lend when no answer sends from it.
func (b *BodyFile) Close() {
	if b.Owner != nil {
		b.Owner.Release()
		return
	}
	b.File.Close() //nolint:errcheck // read-only
}

// FileSender is a connection that sends n bytes of the file fd from off
// on itself (sendfile), after what was written to it before; when it
// cannot, it sends nothing and returns an error wrapping
// errors.ErrUnsupported (the body is then copied). cold: the file's
// pages may have to be read from the disk (see Warmth).
type FileSender interface {
	SendFile(fd int, off, n int64, cold bool) (int64, error)
}

// Section is one answer's body from a lent file: its reads are at their
// own offset (pread), never the descriptor's, which other answers share.
// It is an io.WriterTo for the server, which then sends it with its
// connection's sendfile (FileSender), and its Close gives the lend back.
type Section struct {
	f         *BodyFile
	off, left int64
	to        FileSender
}

var sections = sync.Pool{New: func() any { return new(Section) }}

// Open is s of b as one answer's body, sent on to (nil: read and copied).
// The Section owns the lend from here: its Close gives it back.
func (b *BodyFile) Open(s Span, to FileSender) *Section {
	sec := sections.Get().(*Section)
	sec.f, sec.off, sec.left, sec.to = b, s.Off, s.Len, to
	if c, ok := b.Owner.(LendCounter); ok && to != nil && s.Len > 0 {
		c.Sending()
	}
	return sec
}

// Read reads the section from where the last read ended.
func (s *Section) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.f.File.ReadAt(p, s.off)
	s.off += int64(n)
	s.left -= int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the file is shorter than it said: truncated
	}
	return n, err
}

// WriteTo sends the rest of the section: with the connection's sendfile
// when it has one, else copied through a buffer.
func (s *Section) WriteTo(w io.Writer) (int64, error) {
	var sent int64
	if s.to != nil && s.left > 0 {
		warm, _ := s.f.Owner.(Warmth)
		n, err := s.to.SendFile(s.f.FD, s.off, s.left, warm == nil || !warm.Warm())
		s.off += n
		s.left -= n
		if !errors.Is(err, errors.ErrUnsupported) {
			if err == nil && s.left > 0 {
				err = io.ErrUnexpectedEOF // truncated underneath
			}
			if err == nil && warm != nil {
				warm.Sent()
			}
			return n, err
		}
		sent = n
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	n, err := io.CopyBuffer(writerOnly{w}, readerOnly{s}, *bp)
	return sent + n, err
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// writerOnly and readerOnly hide ReadFrom and WriteTo from io.CopyBuffer,
// which would call back into WriteTo.
type (
	writerOnly struct{ io.Writer }
	readerOnly struct{ io.Reader }
)

// Close gives the lend back; the Section is not used after.
func (s *Section) Close() error {
	if s.f == nil {
		return nil
	}
	s.f.Close()
	*s = Section{}
	sections.Put(s)
	return nil
}

// Lend is the lower tier's lent copy of key, or nil (see Lender). It does
// not look in RAM: the caller did.
func (c *Cache) Lend(key []byte) *Object {
	l, ok := c.lower.(Lender)
	if !ok {
		return nil
	}
	return l.Lend(key) // its entries' tags interned by the tier (Lender)
}

// InternTags gives e its tags' states, which Status reads (a purge by
// tag): a Lender does it once for each entry it lends, before any answer
// may read it.
func (c *Cache) InternTags(e *Entry) { c.internTags(e) }

// FileKeeper is a lower tier that may hold, in a file, the very copy RAM
// holds (it wrote the file from that entry, or built the entry from it):
// a large body of a hit in RAM is then sent from the file (sendfile) as
// a lent one is, rather than copied from the heap into the socket.
type FileKeeper interface {
	// FileOf returns e's bodies in the tier's file of key, lent as
	// Lend's are, when that file holds e's own copy; nil otherwise (a
	// file written from an older or newer copy, none, or none it can
	// open). The caller gives it back once (BodyFile.Close). now is
	// the cache's clock as the caller read it for its lookup: a hit
	// reads no clock again for it.
	FileOf(key []byte, e *Entry, now int64) *BodyFile
}

// FileOf is the lower tier's file holding e, a copy in RAM of key, or nil
// (see FileKeeper).
func (c *Cache) FileOf(key []byte, e *Entry, now int64) *BodyFile {
	if k, ok := c.lower.(FileKeeper); ok {
		return k.FileOf(key, e, now)
	}
	return nil
}
