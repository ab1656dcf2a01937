package h3

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// conn serves one QUIC connection: its control stream, the client's
// unidirectional streams, and its request streams, each on a worker.
type conn struct {
	s     *Server
	qc    *quic.Conn
	addrs streamctx.Conn // its streams' ctx.RemoteAddr and ctx.LocalAddr

	mu        sync.Mutex       // guards the fields below and writes to ctrl
	ctrl      *quic.SendStream // our control stream; nil until opened
	active    int              // request streams being served
	nextID    quic.StreamID    // the lowest client stream id not yet accepted
	goingAway bool             // GOAWAY sent: streams from nextID on are refused
	closing   bool             // the connection's close is scheduled
	peerCtrl  bool             // the client opened its control stream
}

func newConn(s *Server, qc *quic.Conn) *conn {
	c := &conn{s: s, qc: qc}
	c.addrs = streamctx.Conn{Local: qc.LocalAddr(), Remote: qc.RemoteAddr()}
	return c
}

// serve opens the control stream, then takes request streams until the
// connection ends.
func (c *conn) serve() {
	defer c.s.wg.Done()
	if err := c.openControl(); err != nil {
		_ = c.qc.CloseWithError(errInternal, "") // the client sees a connection it cannot use
		return
	}
	if c.s.track(c, true) {
		c.goAway()
	}
	defer c.s.track(c, false)
	c.s.wg.Add(1)
	go c.acceptUni()
	for {
		qs, err := c.qc.AcceptStream(context.Background())
		if err != nil {
			return // the connection ended
		}
		if !c.admit(qs.StreamID()) {
			c.s.stats.Rejected.Add(1)
			qs.CancelRead(errRequestRejected)
			qs.CancelWrite(errRequestRejected)
			continue
		}
		c.s.wg.Add(1)
		c.s.streams.Add(1)
		st := c.s.acquireStream(c, qs)
		st.early = !c.handshakeDone()
		streamctx.Shared.Run(st)
	}
}

// handshakeDone reports whether the handshake has completed: a stream
// opened before is 0-RTT data.
func (c *conn) handshakeDone() bool {
	select {
	case <-c.qc.HandshakeComplete():
		return true
	default:
		return false
	}
}

// openControl opens the server's control stream with its SETTINGS.
func (c *conn) openControl() error {
	ctrl, err := c.qc.OpenUniStream()
	if err != nil {
		return err
	}
	b := appendSettings([]byte{streamControl}, uint64(c.s.cfg.MaxHeaderBytes))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctrl = ctrl
	_, err = ctrl.Write(b)
	return err
}

// admit counts a new stream in, unless GOAWAY refused its id.
func (c *conn) admit(id quic.StreamID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.goingAway && id >= c.nextID {
		return false
	}
	c.nextID = max(c.nextID, id+4) // client-initiated bidirectional ids step by 4
	c.active++
	return true
}

// streamDone counts a finished stream out; the last one after GOAWAY
// closes the connection.
func (c *conn) streamDone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active--
	c.closeIfDrained()
}

// goAway tells the client which requests will be served (those already
// opened) and closes the connection once they are.
func (c *conn) goAway() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.goingAway {
		return
	}
	c.goingAway = true
	b := appendFrameHeader(nil, frameGoAway, uint64(quicvarint.Len(uint64(c.nextID))))
	b = quicvarint.Append(b, uint64(c.nextID))
	// A write blocks only when the client grants no credit on the
	// control stream; it fails once the connection closes.
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		_, _ = c.ctrl.Write(b) // errors: the connection ends either way
	}()
	c.closeIfDrained()
}

// closeIfDrained closes a GOAWAY'd connection with no stream left, a
// little later: what the last streams wrote must reach the client
// first (a CONNECTION_CLOSE discards what is not yet sent). mu must be
// held.
func (c *conn) closeIfDrained() {
	if !c.goingAway || c.active > 0 || c.closing {
		return
	}
	c.closing = true
	linger := 3*c.qc.ConnectionStats().SmoothedRTT + 50*time.Millisecond
	time.AfterFunc(min(linger, time.Second), func() {
		_ = c.qc.CloseWithError(errNoError, "") // closing a closed connection is no error worth reporting
	})
}

// fail ends the connection for a protocol error of the client's.
func (c *conn) fail(code uint64, msg string) {
	c.s.stats.Reset.Add(1)
	_ = c.qc.CloseWithError(quic.ApplicationErrorCode(code), msg) // the connection is over either way
}

// acceptUni serves the client's unidirectional streams: its control
// stream, its QPACK streams (read and dropped: with no dynamic table
// they carry nothing this server uses), and unknown types, refused.
func (c *conn) acceptUni() {
	defer c.s.wg.Done()
	for {
		rs, err := c.qc.AcceptUniStream(context.Background())
		if err != nil {
			return
		}
		c.s.wg.Add(1)
		go c.serveUni(rs)
	}
}

func (c *conn) serveUni(rs *quic.ReceiveStream) {
	defer c.s.wg.Done()
	var f frameReader
	f.reset(rs, make([]byte, 0, 1024))
	typ, err := f.varint()
	if err != nil {
		return // reset or closed before its type: nothing to serve
	}
	switch typ {
	case streamControl:
		c.mu.Lock()
		dup := c.peerCtrl
		c.peerCtrl = true
		c.mu.Unlock()
		if dup {
			c.fail(errStreamCreation, "second control stream")
			return
		}
		c.readControl(&f)
	case streamEncoder, streamDecoder:
		_, _ = io.Copy(io.Discard, rs) // ends with the connection
	case streamPush:
		c.fail(errStreamCreation, "push stream from a client")
	default:
		rs.CancelRead(errStreamCreation) // RFC 9114 §6.2: unknown types are refused, not fatal
	}
}

// maxControlFrame bounds a control frame this server reads whole.
const maxControlFrame = 4 << 10

// readControl reads the client's control stream: SETTINGS first, then
// frames this server has nothing to do with.
func (c *conn) readControl(f *frameReader) {
	first := true
	for {
		typ, n, err := f.header()
		if err != nil {
			var he *h3Error
			if errors.As(err, &he) {
				c.fail(he.code, he.msg)
			} else if c.qc.Context().Err() == nil {
				c.fail(errClosedCritical, "control stream closed")
			}
			return
		}
		if err := c.controlFrame(f, typ, n, first); err != nil {
			var he *h3Error
			if errors.As(err, &he) {
				c.fail(he.code, he.msg)
			}
			return
		}
		first = false
	}
}

func (c *conn) controlFrame(f *frameReader, typ, n uint64, first bool) error {
	switch {
	case first && typ != frameSettings:
		return connError(errMissingSettings, "control stream does not start with SETTINGS")
	case typ == frameSettings && !first, typ == frameData, typ == frameHeaders, typ == framePushPromis:
		return connError(errFrameUnexpected, "frame not allowed on the control stream")
	case typ == 0x2 || typ == 0x6 || typ == 0x8 || typ == 0x9:
		return connError(errFrameUnexpected, "HTTP/2 frame type on the control stream")
	case typ == frameSettings:
		if n > maxControlFrame {
			return connError(errExcessiveLoad, "SETTINGS too large")
		}
		p, err := f.payload(int(n))
		if err != nil {
			return err
		}
		return checkSettings(p)
	}
	return f.skip(n) // GOAWAY, MAX_PUSH_ID, CANCEL_PUSH (no pushes here), unknown
}

// checkSettings validates the client's SETTINGS: no HTTP/2 settings, no
// duplicates (RFC 9114 §7.2.4). The values ask nothing of this server:
// it keeps no QPACK table and its responses stay small.
func checkSettings(p []byte) error {
	var seen [8]bool
	for len(p) > 0 {
		id, n, err := quicvarint.Parse(p)
		if err != nil {
			return connError(errFrame, "malformed SETTINGS")
		}
		p = p[n:]
		_, n, err = quicvarint.Parse(p)
		if err != nil {
			return connError(errFrame, "malformed SETTINGS")
		}
		p = p[n:]
		if id >= 0x2 && id <= 0x5 {
			return connError(errSettings, "HTTP/2 setting")
		}
		if id < uint64(len(seen)) {
			if seen[id] {
				return connError(errSettings, "duplicate setting")
			}
			seen[id] = true
		}
	}
	return nil
}
