//go:build !race

package h3

import (
	"bytes"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/valyala/fasthttp"
)

// TestStreamLayerAllocatesNothing: this package's share of a hit — the
// request's HEADERS read and decoded into a pooled RequestCtx, the
// response's fields encoded and framed with the body — allocates
// nothing. (quic-go's own share, per stream and per packet, is measured
// by BenchmarkHitOverQUIC.)
func TestStreamLayerAllocatesNothing(t *testing.T) {
	data := requestStream(t, []qpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "shop.example"}, {Name: ":path", Value: "/blog/?utm_source=x"},
		{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64)"}, {Name: "accept-encoding", Value: "gzip, deflate, br"}})
	st := &stream{c: &conn{s: &Server{cfg: Config{MaxHeaderBytes: 16 << 10}}}, ctx: new(fasthttp.RequestCtx)}
	st.body.st = st
	buf := make([]byte, readBufSize)
	r := bytes.NewReader(data)
	serve := func() {
		r.Reset(data)
		st.ctx.Request.Reset()
		st.ctx.Response.Reset()
		st.declared, st.bodyDone = -1, false
		st.fr.reset(r, buf)
		if status, err := st.readRequest(); err != nil || status != 0 {
			t.Fatalf("request: %d %v", status, err)
		}
		page725(st.ctx)
		st.encodeHeaders(&st.ctx.Response, 200, false)
		st.out = appendFrameHeader(st.out[:0], frameHeaders, uint64(len(st.enc.b)))
		st.out = append(st.out, st.enc.b...)
		st.out = appendFrameHeader(st.out, frameData, uint64(len(st.ctx.Response.Body())))
		st.out = append(st.out, st.ctx.Response.Body()...)
	}
	serve()
	if n := testing.AllocsPerRun(200, serve); n != 0 {
		t.Fatalf("the HTTP/3 layer allocates %v times per hit, want 0", n)
	}
}

func TestDecodeAllocatesNothing(t *testing.T) {
	p := encodeQPACK(t, qpack.HeaderField{Name: ":method", Value: "GET"}, qpack.HeaderField{Name: ":path", Value: "/page/with/a/long/path"},
		qpack.HeaderField{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64)"}, qpack.HeaderField{Name: "x-custom", Value: "value"})
	var d fieldDecoder
	_ = d.decode(p) // grows the buffers
	if n := testing.AllocsPerRun(100, func() { _ = d.decode(p) }); n != 0 {
		t.Fatalf("decode allocates %v times, want 0", n)
	}
}
