package phppool

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// recType is a FastCGI record type (FastCGI 1.0, section 8).
type recType uint8

const (
	typeBeginRequest    recType = 1
	typeAbortRequest    recType = 2
	typeEndRequest      recType = 3
	typeParams          recType = 4
	typeStdin           recType = 5
	typeStdout          recType = 6
	typeStderr          recType = 7
	typeData            recType = 8
	typeGetValues       recType = 9
	typeGetValuesResult recType = 10
	typeUnknownType     recType = 11
)

const (
	fcgiVersion = 1

	// headerLen is the fixed size of a record header.
	headerLen = 8
	// maxContent is the largest content one record can carry.
	maxContent = 65535
	// maxPadding is the largest padding a peer may send.
	maxPadding = 255

	roleResponder = 1
	flagKeepConn  = 1

	// Protocol status values carried in END_REQUEST.
	statusRequestComplete = 0
	statusCantMpxConn     = 1
	statusOverloaded      = 2
	statusUnknownRole     = 3
)

// header is a decoded record header.
type header struct {
	Version       uint8
	Type          recType
	ID            uint16
	ContentLength uint16
	PaddingLength uint8
}

// padFor returns the padding that rounds n up to a multiple of 8.
func padFor(n int) int { return -n & 7 }

// encode writes h into b, which must hold headerLen bytes.
func (h header) encode(b []byte) {
	b[0] = h.Version
	b[1] = byte(h.Type)
	binary.BigEndian.PutUint16(b[2:4], h.ID)
	binary.BigEndian.PutUint16(b[4:6], h.ContentLength)
	b[6] = h.PaddingLength
	b[7] = 0
}

// decodeHeader parses headerLen bytes. It rejects versions other than 1.
func decodeHeader(b []byte) (header, error) {
	h := header{
		Version:       b[0],
		Type:          recType(b[1]),
		ID:            binary.BigEndian.Uint16(b[2:4]),
		ContentLength: binary.BigEndian.Uint16(b[4:6]),
		PaddingLength: b[6],
	}
	if h.Version != fcgiVersion {
		return h, fmt.Errorf("phppool: record version %d: %w", h.Version, ErrProtocol)
	}
	return h, nil
}

// zeros supplies padding bytes.
var zeros [8]byte

// writeRecord writes content as one record of type t, or as several if it
// is longer than maxContent. Empty content writes one empty record (the
// end-of-stream marker for PARAMS and STDIN).
func writeRecord(w *bufio.Writer, t recType, id uint16, content []byte) error {
	for {
		n := min(len(content), maxContent)
		if err := writeOne(w, t, id, content[:n]); err != nil {
			return err
		}
		content = content[n:]
		if len(content) == 0 {
			return nil
		}
	}
}

// writeOne writes a single record; len(content) must be ≤ maxContent.
func writeOne(w *bufio.Writer, t recType, id uint16, content []byte) error {
	pad := padFor(len(content))
	// Encoded in w's free space (a local array would escape through
	// Write to the socket: an allocation per record).
	hb := w.AvailableBuffer()[:0]
	if cap(hb) >= headerLen {
		hb = hb[:headerLen]
	} else {
		hb = make([]byte, headerLen)
	}
	header{Version: fcgiVersion, Type: t, ID: id, ContentLength: uint16(len(content)), PaddingLength: uint8(pad)}.encode(hb)
	if _, err := w.Write(hb); err != nil {
		return fmt.Errorf("phppool: write record header: %w", err)
	}
	if _, err := w.Write(content); err != nil {
		return fmt.Errorf("phppool: write record content: %w", err)
	}
	if _, err := w.Write(zeros[:pad]); err != nil {
		return fmt.Errorf("phppool: write record padding: %w", err)
	}
	return nil
}

// readHeader reads and decodes the next record header.
// It is decoded in r's buffer: a local array would escape through the
// socket's Read, an allocation per record.
func readHeader(r *bufio.Reader) (header, error) {
	hb, err := r.Peek(headerLen)
	if err != nil {
		if err == io.EOF { // the peer closed before END_REQUEST, or within a header
			err = io.ErrUnexpectedEOF
		}
		return header{}, fmt.Errorf("phppool: read record header: %w", err)
	}
	h, err := decodeHeader(hb)
	_, _ = r.Discard(headerLen) // buffered: cannot fail
	return h, err
}

// readContent returns h's content, read into buf (which must hold
// maxContent bytes) unless r's buffer holds the whole record, and skips its
// padding. The content is valid until the next read from r.
func readContent(r *bufio.Reader, h header, buf []byte) ([]byte, error) {
	if n := int(h.ContentLength) + int(h.PaddingLength); n <= r.Size() {
		// In place: valid until the next read from r, which is all the
		// caller needs, and one copy of every output byte fewer.
		b, err := r.Peek(n)
		if err != nil {
			if err == io.EOF { // the header announced more: cut short
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("phppool: read record content: %w", err)
		}
		_, _ = r.Discard(n) // buffered: cannot fail, and leaves b intact
		return b[:h.ContentLength], nil
	}
	b := buf[:h.ContentLength]
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("phppool: read record content: %w", err)
	}
	if _, err := r.Discard(int(h.PaddingLength)); err != nil {
		return nil, fmt.Errorf("phppool: read record padding: %w", err)
	}
	return b, nil
}

// beginRequestBody is the BEGIN_REQUEST content for a keep-conn responder.
var beginRequestBody = [8]byte{0, roleResponder, flagKeepConn, 0, 0, 0, 0, 0}

// endRequest is the decoded END_REQUEST content.
type endRequest struct {
	AppStatus      uint32
	ProtocolStatus uint8
}

func decodeEndRequest(b []byte) (endRequest, error) {
	if len(b) < 8 {
		return endRequest{}, fmt.Errorf("phppool: END_REQUEST of %d bytes: %w", len(b), ErrProtocol)
	}
	return endRequest{AppStatus: binary.BigEndian.Uint32(b[:4]), ProtocolStatus: b[4]}, nil
}
