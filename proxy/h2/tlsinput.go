package h2

import (
	"bytes"
	"crypto/tls"
	"reflect"
	"unsafe"
)

// An idle TLS connection gives back the input buffers crypto/tls grew
// for its handshake. The ClientHello (about 1.8 KB with an
// X25519MLKEM768 key share) grows the record buffer (rawInput) and the
// handshake message buffer (hand) of every tls.Conn to 4 KiB or so
// together, and crypto/tls keeps both for the connection's life: 42 MB of
// the live heap at 10,000 idle connections, a third of it, and twice that
// at the peak of a burst, since the collector lets the heap grow to twice
// what is live. crypto/tls has no call to release them, so this reaches
// the two fields by their offsets, found by name and type when the
// package loads: if a Go release renames or retypes them, tlsInput is
// off and connections keep the buffers, as before
// (TestTLSInputFieldsAreFound says so first).
//
// A buffer is dropped only while empty, when the connection's reader is
// about to wait on the socket with nothing buffered anywhere (readFirst):
// crypto/tls touches its input only inside a Read of that same goroutine,
// so nothing reads or writes the fields meanwhile. The next record read
// takes a new buffer of its size (about 0.6 KiB for a request), once per
// wake of an idle connection.

// tlsInput holds the offsets of tls.Conn's input fields; ok is false
// when they are not what this expects.
var tlsInput = func() (f struct {
	raw, input, hand uintptr
	ok               bool
},
) {
	t := reflect.TypeFor[tls.Conn]()
	field := func(name string, want reflect.Type) (uintptr, bool) {
		sf, ok := t.FieldByName(name)
		return sf.Offset, ok && sf.Type == want && len(sf.Index) == 1
	}
	var okRaw, okInput, okHand bool
	f.raw, okRaw = field("rawInput", reflect.TypeFor[bytes.Buffer]())
	f.input, okInput = field("input", reflect.TypeFor[bytes.Reader]())
	f.hand, okHand = field("hand", reflect.TypeFor[bytes.Buffer]())
	f.ok = okRaw && okInput && okHand
	return f
}()

// shedTLSInput drops tc's record and handshake buffers when it holds no
// byte in them: no partial record, no undelivered plaintext, no
// handshake message. Only the goroutine that reads tc may call it,
// between reads.
func shedTLSInput(tc *tls.Conn) {
	if !tlsInput.ok {
		return
	}
	p := unsafe.Pointer(tc)
	raw := (*bytes.Buffer)(unsafe.Add(p, tlsInput.raw))
	input := (*bytes.Reader)(unsafe.Add(p, tlsInput.input))
	hand := (*bytes.Buffer)(unsafe.Add(p, tlsInput.hand))
	if raw.Len() != 0 || input.Len() != 0 || hand.Len() != 0 {
		return
	}
	*input = bytes.Reader{} // a view of raw's memory, if anything
	*raw = bytes.Buffer{}
	*hand = bytes.Buffer{}
}
