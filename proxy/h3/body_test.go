package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/valyala/fasthttp"
)

// TestBodyLengthMismatchResetsStream: a request body shorter or longer
// than its content-length resets the stream with H3_MESSAGE_ERROR
// (RFC 9114 §4.1.2) whatever the handler answered after reading it, and
// the connection serves the next request.
func TestBodyLengthMismatchResetsStream(t *testing.T) {
	e := startEnv(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyString("got " + string(ctx.Request.Body())) // a read error leaves the body short
	}, nil)
	tc := &tls.Config{RootCAs: e.ca.Pool(), ServerName: "localhost", NextProtos: []string{"h3"}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, e.addr, tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	post := []qpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: "/form"}, {Name: "content-length", Value: "11"}}
	for _, body := range []string{"hello", "hello world!"} {
		_, err := roundTrip(t, qc, requestStream(t, post, body))
		var se *quic.StreamError
		if !errors.As(err, &se) || se.ErrorCode != errMessage {
			t.Errorf("body %q for content-length 11: %v, want a stream reset with H3_MESSAGE_ERROR", body, err)
		}
	}
	if data, err := roundTrip(t, qc, requestStream(t, post, "hello world")); err != nil || len(data) == 0 {
		t.Fatalf("a good request after the resets: %d bytes, %v", len(data), err)
	}
	if n := e.srv.Stats().Reset.Load(); n != 2 {
		t.Fatalf("%d streams reset for a protocol error, want 2", n)
	}
}

// roundTrip writes a request stream's bytes and reads the answer's.
func roundTrip(t *testing.T, qc *quic.Conn, req []byte) ([]byte, error) {
	t.Helper()
	st, err := qc.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = st.Write(req) // errors show in the read
	_ = st.Close()
	_ = st.SetReadDeadline(time.Now().Add(5 * time.Second))
	return io.ReadAll(st)
}
