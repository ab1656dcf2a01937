package cache

import (
	"io"
	"os"
)

// A lower tier that is a Lender gives back, for one answer, a copy whose
// bodies stay in its file (Lend): the answer sends the one it picks from
// there (sendfile) instead of the tier reading the file into the heap and
// the cache storing it. Such a copy is never stored in RAM, and serves one
// answer only: its file is read from its own offset.

// Lender is a lower tier that lends copies.
type Lender interface {
	// Lend returns the tier's copy of key with its entries' bodies in an
	// open file (Entry.File), unless a purge covers it; nil when it has
	// none it can lend (the caller then fetches it: Fetcher).
	Lend(key []byte) *Object
}

// Span is where one body is in a file; Len 0: none there.
type Span struct{ Off, Len int64 }

// BodyFile is where a lent entry's bodies are: Body, Gzip and Brotli.
type BodyFile struct {
	File               *os.File
	Body, Gzip, Brotli Span
}

// Stream positions the file at s and returns it to be sent as the answer's
// body, s.Len bytes (whoever sends it closes it).
func (b *BodyFile) Stream(s Span) (io.Reader, error) {
	if _, err := b.File.Seek(s.Off, io.SeekStart); err != nil {
		return nil, err
	}
	return b.File, nil
}

// Close closes the file when no answer sends from it.
func (b *BodyFile) Close() { b.File.Close() } //nolint:errcheck // read-only

// Lend is the lower tier's lent copy of key, or nil (see Lender). It does
// not look in RAM: the caller did.
func (c *Cache) Lend(key []byte) *Object {
	l, ok := c.lower.(Lender)
	if !ok {
		return nil
	}
	o := l.Lend(key)
	if o != nil {
		for _, e := range o.Variants {
			c.internTags(e) // Status sees the purges by tag, as for a copy in RAM
		}
	}
	return o
}
