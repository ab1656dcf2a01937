package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// A file is: magic, the payload's length (uint64 little endian), the
// payload, and the payload's CRC-32C. The payload is the object: its key,
// vary spec and variants, strings as uvarint length + bytes, integers as
// varints. An entry's ESI parse is not stored but flagged, and rebuilt
// from the body at load (Config.Revive).

var magic = []byte("RJD1")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is what a file that is truncated, altered or not ours reads as.
var ErrCorrupt = errors.New("disk: corrupt entry file")

const (
	flagDoc = 1 << iota
	flagMustRevalidate
	flagShared
	flagGzip
	flagBrotli
)

// object is what a file holds.
type object struct {
	key      string
	vary     cache.VarySpec
	variants []*cache.Entry
	docs     []bool // docs[i]: variants[i] had an ESI parse
	one      [1]*cache.Entry
	oneDoc   [1]bool
}

// encode appends the file of o to dst.
func encode(dst []byte, o *object) []byte {
	dst = append(dst, magic...)
	at := len(dst)
	dst = binary.LittleEndian.AppendUint64(dst, 0)
	start := len(dst)
	dst = appendString(dst, o.key)
	dst = appendStrings(dst, o.vary.Headers)
	dst = appendStrings(dst, o.vary.Cookies)
	dst = binary.AppendUvarint(dst, uint64(len(o.variants)))
	for i, e := range o.variants {
		dst = appendEntry(dst, e, o.docs[i])
	}
	binary.LittleEndian.PutUint64(dst[at:], uint64(len(dst)-start))
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

func appendEntry(dst []byte, e *cache.Entry, doc bool) []byte {
	flags := uint64(0)
	for _, f := range []struct {
		on  bool
		bit uint64
	}{{doc, flagDoc}, {e.MustRevalidate, flagMustRevalidate}, {e.Shared, flagShared},
		{e.Gzip != nil, flagGzip}, {e.Brotli != nil, flagBrotli}} {
		if f.on {
			flags |= f.bit
		}
	}
	dst = binary.AppendUvarint(dst, flags)
	dst = appendString(dst, e.Variant)
	dst = binary.AppendUvarint(dst, uint64(e.Status))
	dst = appendFields(dst, e.Header)
	dst = appendFields(dst, e.Internal)
	for _, b := range [][]byte{e.ETag, e.ETagWeak, e.LastModified, e.Date, e.ContentType, e.Body, e.Gzip, e.Brotli} {
		dst = appendBytes(dst, b)
	}
	dst = appendStrings(dst, e.Tags)
	for _, t := range []int64{e.Born, e.Stored, e.InitialAge, e.FreshUntil, e.StaleUntil, e.ErrorUntil, e.KeepUntil} {
		dst = binary.AppendVarint(dst, t)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendStrings(dst []byte, list []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(list)))
	for _, s := range list {
		dst = appendString(dst, s)
	}
	return dst
}

func appendFields(dst []byte, fs []cache.Field) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(fs)))
	for _, f := range fs {
		dst = appendBytes(dst, f.Name)
		dst = appendBytes(dst, f.Value)
	}
	return dst
}

// decode reads a whole file. Its checksum and length are checked before
// anything is parsed; the entries it returns share no memory with b's
// header but do alias b for their byte fields (b must not be reused).
func decode(b []byte) (*object, error) {
	o := &object{}
	if err := decodeInto(o, b, false); err != nil {
		return nil, err
	}
	return o, nil
}

// decodeInto is decode into o. With alias, the strings alias b too (no
// copies): for a b that only the entries keep, never reused.
func decodeInto(o *object, b []byte, alias bool) error {
	if len(b) < len(magic)+8+4 || string(b[:len(magic)]) != string(magic) {
		return fmt.Errorf("%w: no header", ErrCorrupt)
	}
	n := binary.LittleEndian.Uint64(b[len(magic):])
	payload := b[len(magic)+8:]
	if uint64(len(payload)) != n+4 {
		return fmt.Errorf("%w: %d payload bytes, header says %d", ErrCorrupt, len(payload)-4, n)
	}
	sum := binary.LittleEndian.Uint32(payload[n:])
	payload = payload[:n]
	if crc32.Checksum(payload, castagnoli) != sum {
		return fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	r := reader{b: payload, alias: alias}
	return r.object(o)
}

// object parses the payload into o.
func (r *reader) object(o *object) error {
	alias := r.alias
	o.key = r.string()
	r.alias = false // the vary spec is the object's, which outlives an entry
	o.vary.Headers = r.strings()
	o.vary.Cookies = r.strings()
	r.alias = alias
	count := r.count()
	if count == 1 { // the common case: no second allocation for either list
		o.variants, o.docs = o.one[:0], o.oneDoc[:0]
	}
	for i := 0; i < count && r.err == nil; i++ {
		e, doc := r.entry()
		o.variants = append(o.variants, e)
		o.docs = append(o.docs, doc)
	}
	if r.err == nil && !r.ended() {
		r.err = fmt.Errorf("%w: trailing bytes", ErrCorrupt)
	}
	return r.err
}

// reader parses a payload; the first error sticks and every later read
// returns zero values.
type reader struct {
	b     []byte
	err   error
	alias bool  // strings alias b
	src   *skim // the file b is read from piecemeal (lend.go); nil: b is the whole payload
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s", ErrCorrupt, what)
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	r.need(binary.MaxVarintLen64)
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	r.need(binary.MaxVarintLen64)
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count is a list length, never more than the bytes left could hold.
func (r *reader) count() int {
	n := r.uvarint()
	r.need(n)
	if n > uint64(len(r.b)) {
		r.fail("count")
		return 0
	}
	return int(n)
}

// bytes is a length-prefixed byte string; nil only when absent or empty.
func (r *reader) bytes() []byte {
	n := r.count()
	if n == 0 || r.err != nil {
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) string() string {
	b := r.bytes()
	if r.alias && len(b) > 0 {
		return unsafe.String(&b[0], len(b))
	}
	return string(b)
}

func (r *reader) strings() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, r.string())
	}
	return out
}

func (r *reader) fields() []cache.Field {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]cache.Field, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, cache.Field{Name: r.bytes(), Value: r.bytes()})
	}
	return out
}

func (r *reader) entry() (*cache.Entry, bool) {
	flags := r.uvarint()
	e := &cache.Entry{Variant: r.string()}
	status := r.uvarint()
	if status < 100 || status > 999 {
		r.fail("status")
	}
	e.Status = int(status)
	e.Header, e.Internal = r.fields(), r.fields()
	e.ETag, e.ETagWeak, e.LastModified, e.Date = r.bytes(), r.bytes(), r.bytes(), r.bytes()
	e.ContentType = r.bytes()
	if r.src != nil { // the bodies stay in the file
		e.File = r.src.spans(r)
	} else {
		e.Body, e.Gzip, e.Brotli = r.bytes(), r.bytes(), r.bytes()
	}
	// A compressed copy is nil when there is none: never an empty one.
	if flags&flagGzip != 0 && e.Gzip == nil {
		e.Gzip = []byte{}
	}
	if flags&flagBrotli != 0 && e.Brotli == nil {
		e.Brotli = []byte{}
	}
	e.Tags = r.strings()
	for _, t := range []*int64{&e.Born, &e.Stored, &e.InitialAge, &e.FreshUntil, &e.StaleUntil, &e.ErrorUntil, &e.KeepUntil} {
		*t = r.varint()
	}
	e.MustRevalidate = flags&flagMustRevalidate != 0
	e.Shared = flags&flagShared != 0
	return e, flags&flagDoc != 0
}
