package h2

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// pipeServer serves one HTTP/2 connection over net.Pipe, without a
// listener or TLS, and returns the client's end.
func pipeServer(t testing.TB, cfg Config, h fasthttp.RequestHandler) net.Conn {
	t.Helper()
	_, c := pipeServerOf(t, cfg, h)
	return c
}

// pipeServerOf is pipeServer that also returns the server.
func pipeServerOf(t testing.TB, cfg Config, h fasthttp.RequestHandler) (*Server, net.Conn) {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	srv, err := NewServer(cfg, h, testLog())
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.serveH2(c1)
		c1.Close()
	}()
	t.Cleanup(func() {
		c2.Close()
		<-done
		stopWorkers(t, srv)
	})
	return srv, c2
}

// stopWorkers waits for the streams of a server that was never started
// (its connections served by hand), as Shutdown would.
func stopWorkers(t testing.TB, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.streams.Wait(ctx); err != nil {
		t.Error(err)
	}
}

// frameReader reads raw frames without allocating.
type frameReader struct {
	r   io.Reader
	hdr [9]byte
	buf []byte
}

func (fr *frameReader) next() (typ http2.FrameType, flags http2.Flags, id uint32, payload []byte, err error) {
	if _, err = io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return
	}
	n := int(fr.hdr[0])<<16 | int(fr.hdr[1])<<8 | int(fr.hdr[2])
	if cap(fr.buf) < n {
		fr.buf = make([]byte, n)
	}
	payload = fr.buf[:n]
	_, err = io.ReadFull(fr.r, payload)
	return http2.FrameType(fr.hdr[3]), http2.Flags(fr.hdr[4]), binary.BigEndian.Uint32(fr.hdr[5:]) & (1<<31 - 1), payload, err
}

// getBlocks encodes the same GET twice: the first block fills the
// server's HPACK table, the second refers to it, as repeated requests do.
func getBlocks() (first, again []byte) {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	encode := func() []byte {
		b.Reset()
		for _, f := range []hpack.HeaderField{
			{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
			{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: "/page"},
			{Name: "user-agent", Value: "h2load"}, {Name: "accept-encoding", Value: "gzip"},
		} {
			enc.WriteField(f)
		}
		return bytes.Clone(b.Bytes())
	}
	return encode(), encode()
}

func appendFrame(dst []byte, t http2.FrameType, flags http2.Flags, id uint32, payload []byte) []byte {
	n := len(payload)
	dst = append(dst, byte(n>>16), byte(n>>8), byte(n), byte(t), byte(flags))
	dst = binary.BigEndian.AppendUint32(dst, id)
	return append(dst, payload...)
}

// inlineClient sends GETs one at a time and reads each response.
type inlineClient struct {
	t      testing.TB
	c      net.Conn
	fr     frameReader
	id     uint32
	block  []byte
	req    []byte
	status byte // first byte of the last HEADERS block
	body   int  // DATA bytes of the last response
	used   int  // connection window used since the last WINDOW_UPDATE
}

func newInlineClient(t testing.TB, c net.Conn) *inlineClient {
	first, again := getBlocks()
	ic := &inlineClient{t: t, c: c, fr: frameReader{r: c}, id: 1, block: again}
	go func() {
		// The server's SETTINGS and WINDOW_UPDATE arrive while the
		// preface is written (net.Pipe is synchronous): the first get
		// reads past them.
		var b []byte
		b = append(b, http2.ClientPreface...)
		b = appendFrame(b, http2.FrameSettings, 0, 0, nil)
		b = appendFrame(b, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 1, first)
		c.Write(b)
	}()
	ic.read()
	return ic
}

func (ic *inlineClient) get() {
	ic.id += 2
	ic.req = ic.req[:0]
	if ic.used += ic.body; ic.used > 32<<10 { // give the connection window back
		var inc [4]byte
		binary.BigEndian.PutUint32(inc[:], uint32(ic.used))
		ic.req = appendFrame(ic.req, http2.FrameWindowUpdate, 0, 0, inc[:])
		ic.used = 0
	}
	ic.req = appendFrame(ic.req, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, ic.id, ic.block)
	if _, err := ic.c.Write(ic.req); err != nil {
		ic.t.Fatal(err)
	}
	ic.read()
}

func (ic *inlineClient) read() {
	ic.body = 0
	for {
		typ, flags, id, p, err := ic.fr.next()
		if err != nil {
			ic.t.Fatal(err)
		}
		if id != ic.id {
			continue
		}
		switch typ {
		case http2.FrameHeaders:
			ic.status = p[0]
			if flags.Has(http2.FlagHeadersEndStream) {
				return
			}
		case http2.FrameData:
			ic.body += len(p)
			if flags.Has(http2.FlagDataEndStream) {
				return
			}
		case http2.FrameRSTStream:
			ic.t.Fatalf("stream %d reset", id)
		}
	}
}

// BenchmarkInlineHit is one request answered through Config.Inline on
// one connection, HPACK and framing included, no network or TLS.
func BenchmarkInlineHit(b *testing.B) {
	hit := func(ctx *fasthttp.RequestCtx) bool { page725Handler(ctx); return true }
	ic := newInlineClient(b, pipeServer(b, Config{Inline: hit}, page725Handler))
	b.ReportAllocs()
	for b.Loop() {
		ic.get()
	}
	if ic.body != len(page725) {
		b.Fatalf("body %d bytes", ic.body)
	}
}

// TestIdleConnectionHoldsNoReadBuffer: once a connection has answered
// and waits for the client, its 8 KiB read buffer is back in the pool;
// the next request takes one again and is answered as before.
func TestIdleConnectionHoldsNoReadBuffer(t *testing.T) {
	hit := func(ctx *fasthttp.RequestCtx) bool { page725Handler(ctx); return true }
	srv, c := pipeServerOf(t, Config{Inline: hit}, page725Handler)
	ic := newInlineClient(t, c)
	for i := range 3 {
		if !testbed.Poll(5*time.Second, func() bool { return srv.readBufs.Load() == 0 }) {
			t.Fatalf("idle after request %d: %d read buffers held, want 0", i, srv.readBufs.Load())
		}
		ic.get()
		if ic.body != len(page725) {
			t.Fatalf("request %d: body %d bytes, want %d", i, ic.body, len(page725))
		}
	}
}
