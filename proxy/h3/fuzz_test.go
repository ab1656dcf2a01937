package h3

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go/quicvarint"
	"github.com/valyala/fasthttp"
)

// requestStream is what a client sends on a request stream: HEADERS with
// fields, then DATA frames with parts.
func requestStream(t testing.TB, fields []qpack.HeaderField, parts ...string) []byte {
	block := encodeQPACK(t, fields...)
	b := quicvarint.Append(quicvarint.Append(nil, frameHeaders), uint64(len(block)))
	b = append(b, block...)
	for _, p := range parts {
		b = quicvarint.Append(quicvarint.Append(b, frameData), uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// readStream runs the request side of a stream over data: the request,
// then its body read to the end, as a handler would.
func readStream(data []byte) (*fasthttp.RequestCtx, int, []byte, error) {
	st := &stream{c: &conn{s: &Server{cfg: Config{MaxHeaderBytes: 16 << 10}}}, ctx: new(fasthttp.RequestCtx), declared: -1}
	st.body.st = st
	st.fr.reset(bytes.NewReader(data), make([]byte, readBufSize))
	status, err := st.readRequest()
	if err != nil || status != 0 {
		return st.ctx, status, nil, err
	}
	var body []byte
	if st.ctx.Request.IsBodyStream() {
		body, err = io.ReadAll(st.ctx.Request.BodyStream())
	}
	return st.ctx, 0, body, err
}

func TestRequestStreamParses(t *testing.T) {
	post := []qpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "a.test"}, {Name: ":path", Value: "/form"}, {Name: "content-length", Value: "11"}}
	tests := []struct {
		name   string
		data   []byte
		body   string
		failed bool
	}{
		{"body in two DATA frames", requestStream(t, post, "hello ", "world"), "hello world", false},
		{"body shorter than content-length", requestStream(t, post, "hello"), "", true},
		{"body longer than content-length", requestStream(t, post, "hello world!"), "", true},
		{"no :path", requestStream(t, post[:3]), "", true},
		{"upper-case name", requestStream(t, append(post[:4:4], qpack.HeaderField{Name: "X-Up", Value: "1"})), "", true},
		{"connection-specific field", requestStream(t, append(post[:4:4], qpack.HeaderField{Name: "connection", Value: "close"})), "", true},
		{"DATA before HEADERS", []byte{0x00, 0x01, 'x'}, "", true},
		{"host agreeing with :authority", requestStream(t, append(post[:5:5], qpack.HeaderField{Name: "host", Value: "A.test"}), "hello world"), "hello world", false},
		{"host disagreeing with :authority (RFC 9114 4.3.1)", requestStream(t, append(post[:5:5], qpack.HeaderField{Name: "host", Value: "b.test"}), "hello world"), "", true},
		{"host without :authority", requestStream(t, append(slices.Concat(post[:2], post[3:5]), qpack.HeaderField{Name: "host", Value: "a.test"}), "hello world"), "hello world", false},
		{"two hosts disagreeing", requestStream(t, append(slices.Concat(post[:2], post[3:5]), qpack.HeaderField{Name: "host", Value: "a.test"}, qpack.HeaderField{Name: "host", Value: "b.test"}), "hello world"), "", true},
		{"stream ends inside a frame", requestStream(t, post, "hello world")[:20], "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, _, body, err := readStream(tt.data)
			if (err != nil) != tt.failed {
				t.Fatalf("error %v, want failure %v", err, tt.failed)
			}
			if !tt.failed && (string(body) != tt.body || string(ctx.Host()) != "a.test" || !ctx.IsPost()) {
				t.Fatalf("body %q host %q method %q", body, ctx.Host(), ctx.Method())
			}
		})
	}
}

// FuzzRequestStream: whatever a client sends on a request stream ends
// in a request, an answer (431) or an error; never a panic or a hang.
func FuzzRequestStream(f *testing.F) {
	get := []qpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "a.test"}, {Name: ":path", Value: "/"}}
	f.Add(requestStream(f, get))
	f.Add(requestStream(f, append(get[:3:3], qpack.HeaderField{Name: ":path", Value: "/up"}, qpack.HeaderField{Name: ":method", Value: "PUT"}), "abc", "def"))
	f.Add([]byte{0x21, 0x00, 0x01, 0x02, 0x00, 0x00})
	f.Add([]byte{0x01, 0x40})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _, _ = readStream(data) // a result of any kind is fine
	})
}
