package h2

import (
	"bytes"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// TestResponseHeadersIndexNothing: the first header block of a
// connection sets the client's table for it to 0 bytes, and no block
// refers to or adds an entry: the second response's block is the first
// one's without that byte, so the connection keeps none of its fields.
func TestResponseHeadersIndexNothing(t *testing.T) {
	var hb headerBuf
	enc := newEncoder(&hb)
	fields := []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "text/html"},
		{Name: "cache-status", Value: "ramjet; hit"}, {Name: "x-site", Value: "a.test"}}
	block := func() []byte {
		hb.b = hb.b[:0]
		for _, f := range fields {
			_ = enc.WriteField(f) // to memory
		}
		return bytes.Clone(hb.b)
	}
	first, second := block(), block()
	if first[0] != 0x20 {
		t.Fatalf("first block starts %#x, want a dynamic table size update to 0 (0x20)", first[0])
	}
	if !bytes.Equal(first[1:], second) {
		t.Fatalf("second block %x, want the first's without its table size update %x: fields were indexed", second, first[1:])
	}
	dec := hpack.NewDecoder(4096, nil)
	for _, b := range [][]byte{first, second} {
		got, err := dec.DecodeFull(b)
		if err != nil || len(got) != len(fields) || got[3] != fields[3] {
			t.Fatalf("decoded %v (%v), want %v", got, err, fields)
		}
	}
}
