package h2

import (
	"io"
	"sync"
	"unsafe"

	"golang.org/x/net/http2/hpack"
)

// The HPACK encoder of a connection's responses indexes nothing: its
// dynamic table is 0 bytes from the first header block on (one "table
// size update" byte), as nginx's is, and every field goes out as a
// static-table index or a literal. An indexing encoder kept up to 4 KiB
// of the connection's past response fields, and the strings they point
// to had to be interned in maps of their own (together 2.5 KiB at an idle
// connection); the price is a few hundred bytes more per response header
// on a busy connection, where nginx pays the same.

// Since the encoder keeps nothing from one block to the next, a
// connection holds none: it is lent by a pool for each header block, with
// its output buffer (an idle connection kept both, 0.56 KiB).

// headerEncoder is a lent encoder and the buffer it writes to.
type headerEncoder struct {
	hb  headerBuf
	enc *hpack.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := new(headerEncoder)
	e.enc = newEncoder(&e.hb)
	return e
}}

// maxLentBlock is the largest output buffer the pool keeps: a block of
// huge cookies does not hold its memory for every later one.
const maxLentBlock = 16 << 10

func (e *headerEncoder) field(name, value string) {
	_ = e.enc.WriteField(hpack.HeaderField{Name: name, Value: value}) // writes to memory
}

// release gives e back to the pool.
func (e *headerEncoder) release() {
	if cap(e.hb.b) > maxLentBlock {
		e.hb.b = nil
	}
	encoders.Put(e)
}

// headerBuf collects the HPACK encoder's output.
type headerBuf struct{ b []byte }

func (h *headerBuf) Write(p []byte) (int, error) {
	h.b = append(h.b, p...)
	return len(p), nil
}

// newEncoder returns an encoder writing to w that indexes no field.
func newEncoder(w io.Writer) *hpack.Encoder {
	e := hpack.NewEncoder(w)
	e.SetMaxDynamicTableSizeLimit(0)
	return e
}

// bytesString is b as a string without a copy, for the encoder, which
// keeps no field past WriteField: b must not change while it is used.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
