package h3

import (
	"bytes"
	"errors"

	"golang.org/x/net/http2/hpack"
)

// QPACK (RFC 9204) with the static table only: this server announces a
// dynamic table capacity of 0 (the default of SETTINGS_QPACK_MAX_TABLE_CAPACITY),
// so every field section a client sends starts with a zero prefix and
// names static entries or literals. Decoding writes into the caller's
// buffer and encoding appends to one, so neither allocates.

var (
	errQPACK       = errors.New("h3: malformed QPACK field section")
	errQPACKDynTbl = errors.New("h3: QPACK field section uses the dynamic table")
)

// staticTable is RFC 9204 Appendix A, in index order.
var staticTable = [...]struct{ name, value string }{
	{":authority", ""}, {":path", "/"}, {"age", "0"}, {"content-disposition", ""},
	{"content-length", "0"}, {"cookie", ""}, {"date", ""}, {"etag", ""},
	{"if-modified-since", ""}, {"if-none-match", ""}, {"last-modified", ""}, {"link", ""},
	{"location", ""}, {"referer", ""}, {"set-cookie", ""}, {":method", "CONNECT"},
	{":method", "DELETE"}, {":method", "GET"}, {":method", "HEAD"}, {":method", "OPTIONS"},
	{":method", "POST"}, {":method", "PUT"}, {":scheme", "http"}, {":scheme", "https"},
	{":status", "103"}, {":status", "200"}, {":status", "304"}, {":status", "404"},
	{":status", "503"}, {"accept", "*/*"}, {"accept", "application/dns-message"}, {"accept-encoding", "gzip, deflate, br"},
	{"accept-ranges", "bytes"}, {"access-control-allow-headers", "cache-control"}, {"access-control-allow-headers", "content-type"}, {"access-control-allow-origin", "*"},
	{"cache-control", "max-age=0"}, {"cache-control", "max-age=2592000"}, {"cache-control", "max-age=604800"}, {"cache-control", "no-cache"},
	{"cache-control", "no-store"}, {"cache-control", "public, max-age=31536000"}, {"content-encoding", "br"}, {"content-encoding", "gzip"},
	{"content-type", "application/dns-message"}, {"content-type", "application/javascript"}, {"content-type", "application/json"}, {"content-type", "application/x-www-form-urlencoded"},
	{"content-type", "image/gif"}, {"content-type", "image/jpeg"}, {"content-type", "image/png"}, {"content-type", "text/css"},
	{"content-type", "text/html; charset=utf-8"}, {"content-type", "text/plain"}, {"content-type", "text/plain;charset=utf-8"}, {"range", "bytes=0-"},
	{"strict-transport-security", "max-age=31536000"}, {"strict-transport-security", "max-age=31536000; includesubdomains"},
	{"strict-transport-security", "max-age=31536000; includesubdomains; preload"}, {"vary", "accept-encoding"},
	{"vary", "origin"}, {"x-content-type-options", "nosniff"}, {"x-xss-protection", "1; mode=block"}, {":status", "100"},
	{":status", "204"}, {":status", "206"}, {":status", "302"}, {":status", "400"},
	{":status", "403"}, {":status", "421"}, {":status", "425"}, {":status", "500"},
	{"accept-language", ""}, {"access-control-allow-credentials", "FALSE"}, {"access-control-allow-credentials", "TRUE"}, {"access-control-allow-headers", "*"},
	{"access-control-allow-methods", "get"}, {"access-control-allow-methods", "get, post, options"}, {"access-control-allow-methods", "options"}, {"access-control-expose-headers", "content-length"},
	{"access-control-request-headers", "content-type"}, {"access-control-request-method", "get"}, {"access-control-request-method", "post"}, {"alt-svc", "clear"},
	{"authorization", ""}, {"content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"}, {"early-data", "1"}, {"expect-ct", ""},
	{"forwarded", ""}, {"if-range", ""}, {"origin", ""}, {"purpose", "prefetch"},
	{"server", ""}, {"timing-allow-origin", "*"}, {"upgrade-insecure-requests", "1"}, {"user-agent", ""},
	{"x-forwarded-for", ""}, {"x-frame-options", "deny"}, {"x-frame-options", "sameorigin"},
}

// staticBytes is staticTable's names and values as bytes, which decoded
// fields alias.
var staticBytes = func() (b [len(staticTable)][2][]byte) {
	for i, e := range staticTable {
		b[i] = [2][]byte{[]byte(e.name), []byte(e.value)}
	}
	return b
}()

// staticName maps a lower-case field name to its first static index,
// for the encoder's name references; statusIndex the :status values the
// table holds whole.
var staticName, statusIndex = func() (map[string]uint8, map[int]uint8) {
	names, status := map[string]uint8{}, map[int]uint8{}
	for i, e := range staticTable {
		if _, ok := names[e.name]; !ok {
			names[e.name] = uint8(i)
		}
		if e.name == ":status" {
			code := int(e.value[0]-'0')*100 + int(e.value[1]-'0')*10 + int(e.value[2]-'0')
			status[code] = uint8(i)
		}
	}
	return names, status
}()

// field is one decoded field line; name and value alias the section or
// the decoder's scratch buffer, valid until the next decode.
type field struct{ name, value []byte }

// fieldDecoder decodes one field section at a time.
type fieldDecoder struct {
	scratch bytes.Buffer // Huffman-decoded strings of the current section
	// spans: where each decoded string lies, two per field (scratch may
	// grow and move while a section decodes: fields are resolved at the
	// end).
	spans  []span
	fields []field
}

// span is a string in the section (inSection) or in scratch.
type span struct {
	off, n    int
	inSection bool
}

// decode parses section into d.fields. The strings alias section and
// d's buffer; they are valid until the next decode.
func (d *fieldDecoder) decode(section []byte) error {
	d.scratch.Reset()
	d.spans, d.fields = d.spans[:0], d.fields[:0]
	p := section
	ric, p, err := readInt(p, 8)
	if err != nil {
		return err
	}
	if len(p) == 0 {
		return errQPACK
	}
	base, p, err := readInt(p, 7) // sign bit included: 0 either way without a table
	if err != nil {
		return err
	}
	if ric != 0 || base != 0 {
		return errQPACKDynTbl
	}
	for len(p) > 0 {
		if p, err = d.line(section, p); err != nil {
			return err
		}
	}
	d.resolve(section)
	return nil
}

// line decodes the field line at the start of p (a suffix of section).
func (d *fieldDecoder) line(section, p []byte) ([]byte, error) {
	b := p[0]
	switch {
	case b&0x80 != 0: // indexed field line: 1 T index(6)
		if b&0x40 == 0 {
			return nil, errQPACKDynTbl
		}
		i, rest, err := readInt(p, 6)
		if err != nil || i >= uint64(len(staticTable)) {
			return nil, errQPACK
		}
		d.static(i, true)
		return rest, nil
	case b&0xc0 == 0x40: // literal with name reference: 01 N T index(4)
		if b&0x10 == 0 {
			return nil, errQPACKDynTbl
		}
		i, rest, err := readInt(p, 4)
		if err != nil || i >= uint64(len(staticTable)) {
			return nil, errQPACK
		}
		d.static(i, false)
		return d.str(section, rest, 7)
	case b&0xe0 == 0x20: // literal with literal name: 001 N H len(3)
		rest, err := d.str(section, p, 3)
		if err != nil {
			return nil, err
		}
		return d.str(section, rest, 7)
	}
	return nil, errQPACKDynTbl // post-base forms need the dynamic table
}

// static records static entry i's name and, with value, its value.
func (d *fieldDecoder) static(i uint64, value bool) {
	d.spans = append(d.spans, span{off: -int(i) - 1})
	if value {
		d.spans = append(d.spans, span{off: -int(i) - 1, n: 1})
	}
}

// str decodes a string literal whose length prefix has n bits, the
// Huffman flag being the bit above them.
func (d *fieldDecoder) str(section, p []byte, n uint8) ([]byte, error) {
	if len(p) == 0 {
		return nil, errQPACK
	}
	huffman := p[0]&(1<<n) != 0
	l, rest, err := readInt(p, n)
	if err != nil || uint64(len(rest)) < l {
		return nil, errQPACK
	}
	raw := rest[:l]
	if !huffman {
		d.spans = append(d.spans, span{off: len(section) - len(rest), n: int(l), inSection: true})
		return rest[l:], nil
	}
	off := d.scratch.Len()
	if _, err := hpack.HuffmanDecode(&d.scratch, raw); err != nil {
		return nil, errQPACK
	}
	d.spans = append(d.spans, span{off: off, n: d.scratch.Len() - off})
	return rest[l:], nil
}

// resolve turns the spans, two per field, into d.fields.
func (d *fieldDecoder) resolve(section []byte) {
	sc := d.scratch.Bytes()
	at := func(s span) []byte {
		switch {
		case s.off < 0: // static entry -off-1: its name (n 0) or its value (n 1)
			return staticBytes[-s.off-1][s.n]
		case s.inSection:
			return section[s.off : s.off+s.n]
		}
		return sc[s.off : s.off+s.n]
	}
	for i := 0; i+1 < len(d.spans); i += 2 {
		d.fields = append(d.fields, field{name: at(d.spans[i]), value: at(d.spans[i+1])})
	}
}

// readInt reads a QPACK prefixed integer (RFC 9204 §4.1.1, HPACK's) with
// an n-bit prefix from the start of p.
func readInt(p []byte, n uint8) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errQPACK
	}
	mask := uint64(1)<<n - 1
	i := uint64(p[0]) & mask
	p = p[1:]
	if i < mask {
		return i, p, nil
	}
	for shift := uint(0); len(p) > 0; shift += 7 {
		if shift > 56 {
			return 0, nil, errQPACK
		}
		b := p[0]
		p = p[1:]
		i += uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return i, p, nil
		}
	}
	return 0, nil, errQPACK
}

// appendInt appends i as a prefixed integer with an n-bit prefix, the
// bits above it set to flags.
func appendInt(dst []byte, n uint8, flags byte, i uint64) []byte {
	mask := uint64(1)<<n - 1
	if i < mask {
		return append(dst, flags|byte(i))
	}
	dst = append(dst, flags|byte(mask))
	for i -= mask; i >= 0x80; i >>= 7 {
		dst = append(dst, byte(i)|0x80)
	}
	return append(dst, byte(i))
}

// fieldEncoder appends a response's field section: static references
// where the table has the name (or the whole :status), literal values
// without Huffman coding (cheaper to write; a response header is a few
// hundred bytes at most).
type fieldEncoder struct{ b []byte }

func (e *fieldEncoder) start() { e.b = append(e.b[:0], 0, 0) } // Required Insert Count 0, Base 0

func (e *fieldEncoder) status(code int) {
	if i, ok := statusIndex[code]; ok {
		e.b = appendInt(e.b, 6, 0xc0, uint64(i)) // indexed, static
		return
	}
	e.b = appendInt(e.b, 4, 0x50, uint64(staticName[":status"]))
	e.b = appendInt(e.b, 7, 0, 3)
	e.b = append(e.b, byte('0'+code/100%10), byte('0'+code/10%10), byte('0'+code%10))
}

// field appends name (lower case) and value.
func (e *fieldEncoder) field(name, value []byte) {
	if i, ok := staticName[string(name)]; ok {
		e.b = appendInt(e.b, 4, 0x50, uint64(i)) // literal with static name reference
	} else {
		e.b = appendInt(e.b, 3, 0x20, uint64(len(name))) // literal name, no Huffman
		e.b = append(e.b, name...)
	}
	e.b = appendInt(e.b, 7, 0, uint64(len(value)))
	e.b = append(e.b, value...)
}
