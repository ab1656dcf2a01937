package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
)

// The load mode speaks just enough HTTP/3 itself — a control stream with
// empty SETTINGS, one pre-encoded HEADERS frame per GET, the answer's
// frames read through a reused buffer — instead of going through
// net/http and quic-go's http3.Transport, which build an http.Request,
// a header map and a response per request and cost the client more CPU
// than the server spends answering (measured: 65 µs per 725 B request
// against the server's 27–49 µs). A load generator that is itself the
// bottleneck measures itself; -std keeps the http3.Transport path for
// comparison.

// HTTP/3 frame and stream types (RFC 9114 §7.2, §6.2).
const (
	frameData     = 0x0
	frameHeaders  = 0x1
	frameSettings = 0x4
	streamControl = 0x0
)

// maxHeaderFrame bounds the response field section read whole.
const maxHeaderFrame = 64 << 10

// rawConn is one QUIC connection with its control stream open.
type rawConn struct {
	qc  *quic.Conn
	get []byte // the GET's HEADERS frame, the same for every request
}

func dialRaw(ctx context.Context, c config) (*rawConn, error) {
	tc := c.tlsConfig(nil)
	tc.NextProtos = []string{"h3"}
	qc, err := quic.DialAddr(ctx, c.url.Host, tc, &quic.Config{MaxIdleTimeout: c.timeout})
	if err != nil {
		return nil, err
	}
	ctrl, err := qc.OpenUniStream()
	if err == nil {
		_, err = ctrl.Write([]byte{streamControl, frameSettings, 0}) // no settings: the defaults
	}
	if err != nil {
		_ = qc.CloseWithError(0x102, "") // H3_INTERNAL_ERROR; the dial's error is the one reported
		return nil, err
	}
	get, err := getFrame(c)
	if err != nil {
		return nil, err
	}
	return &rawConn{qc: qc, get: get}, nil
}

// getFrame encodes the HEADERS frame of a GET of c.url once.
func getFrame(c config) ([]byte, error) {
	var section bytes.Buffer
	enc := qpack.NewEncoder(&section)
	path := c.url.RequestURI()
	for _, f := range []qpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: c.url.Host}, {Name: ":path", Value: path}, {Name: "user-agent", Value: "h3load"}} {
		if err := enc.WriteField(f); err != nil {
			return nil, err
		}
	}
	b := quicvarint.Append(quicvarint.Append(nil, frameHeaders), uint64(section.Len()))
	return append(b, section.Bytes()...), nil
}

func (rc *rawConn) close() { _ = rc.qc.CloseWithError(0x100, "") } // H3_NO_ERROR; nothing to report at the end

// rawGetter sends GETs on one connection, one at a time, reusing its
// reader and buffer: a load worker owns one.
type rawGetter struct {
	rc  *rawConn
	br  *bufio.Reader
	buf []byte
	dec *qpack.Decoder
}

func newGetter(rc *rawConn) *rawGetter {
	return &rawGetter{rc: rc, br: bufio.NewReaderSize(nil, 16<<10), buf: make([]byte, 4<<10), dec: qpack.NewDecoder()}
}

var errNoStatus = errors.New("h3load: answer without a HEADERS frame")

// do sends one GET on a new stream and reads its answer to the end: the
// status from the HEADERS frame, the DATA frames' payload counted and
// dropped.
func (g *rawGetter) do(ctx context.Context) (status int, body int64, err error) {
	s, err := g.rc.qc.OpenStreamSync(ctx)
	if err != nil {
		return 0, 0, err
	}
	if _, err := s.Write(g.rc.get); err != nil {
		s.CancelRead(0x10c) // H3_REQUEST_CANCELLED
		return 0, 0, err
	}
	if err := s.Close(); err != nil {
		return 0, 0, err
	}
	g.br.Reset(s)
	for {
		typ, err := quicvarint.Read(g.br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, body, err
		}
		n, err := quicvarint.Read(g.br)
		if err != nil {
			return 0, body, fmt.Errorf("h3load: frame header: %w", err)
		}
		switch {
		case typ == frameHeaders && status == 0:
			if status, err = g.status(n); err != nil {
				s.CancelRead(0x10c)
				return 0, body, err
			}
		case typ == frameData:
			body += int64(n)
			fallthrough
		default: // trailers, unknown frames
			if _, err := g.br.Discard(int(n)); err != nil {
				return 0, body, fmt.Errorf("h3load: frame cut short: %w", err)
			}
		}
	}
	if status == 0 {
		return 0, body, errNoStatus
	}
	return status, body, nil
}

// status reads an n-byte field section and returns its :status (the
// first field, RFC 9114 §4.3: pseudo-fields come first).
func (g *rawGetter) status(n uint64) (int, error) {
	if n > maxHeaderFrame {
		return 0, fmt.Errorf("h3load: %d-byte field section", n)
	}
	if int(n) > len(g.buf) {
		g.buf = make([]byte, n)
	}
	p := g.buf[:n]
	if _, err := io.ReadFull(g.br, p); err != nil {
		return 0, fmt.Errorf("h3load: field section cut short: %w", err)
	}
	f, err := g.dec.Decode(p)()
	if err != nil {
		return 0, fmt.Errorf("h3load: QPACK: %w", err)
	}
	if f.Name != ":status" {
		return 0, fmt.Errorf("h3load: first field %q, not :status", f.Name)
	}
	return strconv.Atoi(f.Value)
}

// state is the connection's TLS state, for the summary.
func (rc *rawConn) state() *tls.ConnectionState {
	st := rc.qc.ConnectionState().TLS
	return &st
}
