package h3

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// earlyRecorder answers with what the handler saw: whether the handshake
// had completed, and the request's Early-Data.
func earlyRecorder(ctx *fasthttp.RequestCtx) {
	done := ctx.TLSConnectionState().HandshakeComplete
	ctx.Response.Header.Set("X-Handshake-Done", map[bool]string{true: "yes", false: "no"}[done])
	ctx.Response.Header.Set("X-Early-Data", string(ctx.Request.Header.Peek("Early-Data")))
	ctx.SetBody(ctx.Request.Body())
}

// resumedConn dials e with a session ticket from an earlier connection,
// returning before the handshake completes: what it sends at once is
// 0-RTT data. The resumed connection goes through a relay that delays
// the server's packets, so that the handshake cannot complete before
// that data is served, however fast the machine.
func resumedConn(t *testing.T, e *env) *quic.Conn {
	t.Helper()
	tc := &tls.Config{RootCAs: e.ca.Pool(), ServerName: "localhost", NextProtos: []string{"h3"},
		ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	first, err := quic.DialAddr(ctx, e.addr, tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The ticket comes after the handshake; a request's round trip waits
	// for it.
	if st, resp := rawGet(t, first, "GET", "/warm", ""); st != "200" {
		t.Fatalf("warm-up: %s %q", st, resp)
	}
	_ = first.CloseWithError(0, "")
	relay := testbed.StartUDPRelay(t, e.addr, 200*time.Millisecond)
	qc, err := quic.DialAddrEarly(ctx, relay.Addr, tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	return qc
}

// rawGet sends one request on a new stream of qc and reads the answer's
// :status and the X- fields it carries.
func rawGet(t *testing.T, qc *quic.Conn, method, path, body string) (string, string) {
	t.Helper()
	st, err := qc.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	fields := []qpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: path}}
	parts := []string{}
	if body != "" {
		parts = append(parts, body)
	}
	_, _ = st.Write(requestStream(t, fields, parts...)) // errors show in the read
	_ = st.Close()
	_ = st.SetReadDeadline(time.Now().Add(5 * time.Second))
	data, err := io.ReadAll(st)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	var status string
	var xs []string
	rd := quicvarint.NewReader(bytes.NewReader(data))
	for {
		typ, err := quicvarint.Read(rd)
		if err != nil {
			break
		}
		n, _ := quicvarint.Read(rd)
		p := make([]byte, n)
		_, _ = io.ReadFull(rd, p)
		if typ == frameHeaders {
			fields, _ := decodeQPACK(p)
			for _, f := range fields {
				if f.Name == ":status" {
					status = f.Value
				} else if f.Name[0] == 'x' {
					xs = append(xs, f.Name+"="+f.Value)
				}
			}
		}
	}
	return status, join(xs)
}

func join(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	return b.String()
}

func TestZeroRTTServesGetEarlyAndHoldsPost(t *testing.T) {
	e := startEnv(t, earlyRecorder, nil)
	qc := resumedConn(t, e)
	// Both requests leave before the handshake can have completed.
	get := make(chan [2]string, 1)
	go func() { s, x := rawGet(t, qc, "GET", "/early", ""); get <- [2]string{s, x} }()
	ps, px := rawGet(t, qc, "POST", "/form", "a=1")
	g := <-get
	if !qc.ConnectionState().Used0RTT {
		t.Fatal("the server did not accept 0-RTT")
	}
	if g[0] != "200" || g[1] != "x-handshake-done=no x-early-data=1" {
		t.Errorf("0-RTT GET: %s %q, want served early with Early-Data: 1", g[0], g[1])
	}
	if ps != "200" || px != "x-handshake-done=yes x-early-data=" {
		t.Errorf("0-RTT POST: %s %q, want held until the handshake, without Early-Data", ps, px)
	}
	if a, r := e.srv.Stats().EarlyAccepted.Load(), e.srv.Stats().EarlyRejected.Load(); a != 1 || r != 1 {
		t.Errorf("early accepted %d, rejected %d; want 1 and 1", a, r)
	}
}

func TestZeroRTTRefusedWhenDisabled(t *testing.T) {
	e := startEnv(t, earlyRecorder, func(c *Config) { c.Disable0RTT = true })
	qc := resumedConn(t, e)
	s, x := rawGet(t, qc, "GET", "/early", "")
	if qc.ConnectionState().Used0RTT || s != "200" || x != "x-handshake-done=yes x-early-data=" {
		t.Fatalf("with 0-RTT off: used %v, %s %q", qc.ConnectionState().Used0RTT, s, x)
	}
}
