package h3

import (
	"errors"
	"io"

	"github.com/quic-go/quic-go/quicvarint"
)

// HTTP/3 frame and stream types (RFC 9114 §7.2, §6.2) and error codes
// (§8.1).
const (
	frameData       = 0x0
	frameHeaders    = 0x1
	frameCancelPush = 0x3
	frameSettings   = 0x4
	framePushPromis = 0x5
	frameGoAway     = 0x7
	frameMaxPushID  = 0xd

	streamControl = 0x0
	streamPush    = 0x1
	streamEncoder = 0x2
	streamDecoder = 0x3

	settingTableCapacity   = 0x1
	settingMaxFieldSection = 0x6
	settingBlockedStreams  = 0x7

	errNoError           = 0x100
	errGeneralProtocol   = 0x101
	errInternal          = 0x102
	errStreamCreation    = 0x103
	errClosedCritical    = 0x104
	errFrameUnexpected   = 0x105
	errFrame             = 0x106
	errExcessiveLoad     = 0x107
	errSettings          = 0x109
	errMissingSettings   = 0x10a
	errRequestRejected   = 0x10b
	errRequestIncomplete = 0x10d
	errMessage           = 0x10e
)

// h3Error is a protocol error: code closes the connection when conn is
// set, else resets the stream.
type h3Error struct {
	code uint64
	conn bool
	msg  string
}

func (e *h3Error) Error() string { return "h3: " + e.msg }

func connError(code uint64, msg string) error   { return &h3Error{code: code, conn: true, msg: msg} }
func streamError(code uint64, msg string) error { return &h3Error{code: code, msg: msg} }

var (
	errFrameTooLarge = errors.New("h3: frame too large")
	// errShortFrame: the stream ended inside a frame.
	errShortFrame = connError(errFrame, "stream ended inside a frame")
)

// frameReader reads frames from one stream through a buffer of its own,
// which holds a whole HEADERS frame: the field section is decoded from
// it in place.
type frameReader struct {
	r        io.Reader
	buf      []byte // buf[off:end] is read and not yet consumed
	off, end int
	err      error // the stream's read error, io.EOF at its end
}

func (f *frameReader) reset(r io.Reader, buf []byte) {
	*f = frameReader{r: r, buf: buf[:cap(buf)]}
}

func (f *frameReader) buffered() int { return f.end - f.off }

// fill reads until n bytes are buffered, or the stream ends or fails
// (f.err). It moves what is buffered to the front when n would not fit
// behind it, and reports whether n bytes are there.
func (f *frameReader) fill(n int) bool {
	for f.buffered() < n && f.err == nil {
		if f.off+n > len(f.buf) {
			f.end = copy(f.buf, f.buf[f.off:f.end])
			f.off = 0
		}
		var m int
		m, f.err = f.r.Read(f.buf[f.end:])
		f.end += m
	}
	return f.buffered() >= n
}

// fillNow is fill for what has arrived already: r must return at once
// (a read deadline in the past). It reports whether n bytes are there.
func (f *frameReader) fillNow(n int) bool {
	ok := f.fill(n)
	if f.err != nil && f.err != io.EOF {
		f.err = nil // the deadline: nothing more yet
	}
	return ok
}

// varint reads one QUIC variable-length integer.
func (f *frameReader) varint() (uint64, error) {
	if !f.fill(1) {
		return 0, f.readErr()
	}
	n := 1 << (f.buf[f.off] >> 6)
	if !f.fill(n) {
		return 0, f.readErr()
	}
	v, _, err := quicvarint.Parse(f.buf[f.off : f.off+n])
	f.off += n
	return v, err // cannot fail: n bytes are there
}

// readErr is the error of a read that ended short: io.EOF only when
// nothing of the next item was read.
func (f *frameReader) readErr() error {
	if f.err == io.EOF && f.buffered() > 0 {
		return errShortFrame
	}
	return f.err
}

// header reads a frame's type and length. io.EOF means the stream ended
// cleanly between frames.
func (f *frameReader) header() (typ, length uint64, err error) {
	if typ, err = f.varint(); err != nil {
		return 0, 0, err
	}
	if length, err = f.varint(); err != nil {
		if err == io.EOF {
			err = errShortFrame
		}
		return 0, 0, err
	}
	return typ, length, nil
}

// payload returns the next n bytes (n within the buffer's size) and
// consumes them; they are valid until the next read.
func (f *frameReader) payload(n int) ([]byte, error) {
	if n > len(f.buf) {
		return nil, errFrameTooLarge
	}
	if !f.fill(n) {
		if f.err == io.EOF {
			return nil, errShortFrame
		}
		return nil, f.err
	}
	p := f.buf[f.off : f.off+n]
	f.off += n
	return p, nil
}

// skip consumes n bytes, buffered or not.
func (f *frameReader) skip(n uint64) error {
	for n > 0 {
		if f.buffered() == 0 {
			f.off, f.end = 0, 0
			if !f.fill(1) {
				if f.err == io.EOF {
					return errShortFrame
				}
				return f.err
			}
		}
		k := min(n, uint64(f.buffered()))
		f.off += int(k)
		n -= k
	}
	return nil
}

// read copies up to len(p) payload bytes: buffered ones first, then
// straight from the stream.
func (f *frameReader) read(p []byte) (int, error) {
	if f.buffered() > 0 {
		n := copy(p, f.buf[f.off:f.end])
		f.off += n
		return n, nil
	}
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.r.Read(p)
	if err != nil {
		f.err = err
		if n > 0 {
			err = nil
		}
	}
	return n, err
}

// atEOF reports whether the stream has ended with nothing left to read.
func (f *frameReader) atEOF() bool {
	return f.buffered() == 0 && f.err == io.EOF
}

// appendFrameHeader appends a frame's type and length.
func appendFrameHeader(b []byte, typ, length uint64) []byte {
	return quicvarint.Append(quicvarint.Append(b, typ), length)
}

// appendSettings appends the SETTINGS frame this server sends: the
// largest field section it takes, no dynamic QPACK table (the defaults
// of the others).
func appendSettings(b []byte, maxFieldSection uint64) []byte {
	payload := quicvarint.Len(settingMaxFieldSection) + quicvarint.Len(maxFieldSection)
	b = appendFrameHeader(b, frameSettings, uint64(payload))
	return quicvarint.Append(quicvarint.Append(b, settingMaxFieldSection), maxFieldSection)
}

// reservedOnRequest reports the frame types a client must not send on a
// request stream (RFC 9114 §7.2): control frames, push frames, and the
// HTTP/2 types HTTP/3 reserves.
func reservedOnRequest(typ uint64) bool {
	switch typ {
	case frameCancelPush, frameSettings, framePushPromis, frameGoAway, frameMaxPushID, 0x2, 0x6, 0x8, 0x9:
		return true
	}
	return false
}
