package h3

import (
	"crypto/tls"
	"net"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// streamConn stands in for the connection in a stream's RequestCtx, one
// per stream (pooled with it), so that ctx.RemoteAddr, ctx.LocalAddr,
// ctx.IsTLS and ctx.TLSConnectionState work, and so that the request
// learns it came over HTTP/3 and sends its interim responses on its own
// stream (streamctx.Transport). The addresses are UDP ones.
type streamConn struct {
	streamctx.Conn
	st *stream
}

// Handshake and ConnectionState make fasthttp's ctx.IsTLS true. Before
// the handshake completes (a 0-RTT request) the state is not complete
// either.
func (*streamConn) Handshake() error { return nil }
func (s *streamConn) ConnectionState() tls.ConnectionState {
	return s.st.c.qc.ConnectionState().TLS
}

func (*streamConn) Protocol() streamctx.Protocol { return streamctx.HTTP3 }
func (*streamConn) BehindTLS() bool              { return false }
func (*streamConn) FromTerminator() bool         { return false }

// SendInterim sends an interim (1xx) response ahead of the final one: a
// HEADERS frame of its own on the request stream (RFC 9114 §4.1), which
// the handler's goroutine, the stream's, writes before the answer's. It
// reports false, having sent nothing, for 101 (no interim response in
// HTTP/3), for a ctx that is not this stream's, or once the answer has
// started; and false when the write failed (the client is gone: the
// answer's write shows it).
func (s *streamConn) SendInterim(ctx *fasthttp.RequestCtx, status int, fields [][2][]byte) bool {
	st := s.st
	if st.ctx != ctx || st.answering || !streamctx.Interim(status) {
		return false
	}
	e := &st.enc
	e.start()
	e.status(status)
	st.fields.Interim(fields)
	for name, v := range st.fields.All() {
		e.field(name, v)
	}
	st.out = appendFrameHeader(st.out[:0], frameHeaders, uint64(len(e.b)))
	st.out = append(st.out, e.b...)
	err := st.write(st.out)
	st.out = st.out[:0]
	return err == nil
}

var (
	_ net.Conn            = (*streamConn)(nil)
	_ streamctx.Transport = (*streamConn)(nil)
)
