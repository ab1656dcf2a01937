package h2

import (
	"io"
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
