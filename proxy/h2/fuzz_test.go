package h2

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzConn feeds arbitrary frames, after the client preface, to a
// connection: it must neither panic nor hang, whatever they are.
func FuzzConn(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		srv, err := NewServer(Config{Addr: "127.0.0.1:0", MaxConcurrentStreams: 4, MaxHeaderBytes: 1024}, echo, testLog())
		if err != nil {
			t.Fatal(err)
		}
		defer stopWorkers(t, srv)
		c1, c2 := net.Pipe()
		go io.Copy(io.Discard, c2)
		go func() {
			c2.Write(append([]byte(http2.ClientPreface), in...))
			time.Sleep(time.Millisecond) // let the server answer before it reads EOF
			c2.Close()
		}()
		done := make(chan struct{})
		go func() { srv.serveH2(c1); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("connection still served after the client closed")
		}
		c1.Close()
	})
}

func fuzzSeeds() [][]byte {
	var seeds [][]byte
	frames := func(write func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer)) {
		var b, hb bytes.Buffer
		fr := http2.NewFramer(&b, nil)
		fr.AllowIllegalWrites = true
		enc := hpack.NewEncoder(&hb)
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
		write(fr, enc, &hb)
		seeds = append(seeds, bytes.Clone(b.Bytes()))
	}
	get := func(enc *hpack.Encoder, hb *bytes.Buffer, method, path string, extra ...hpack.HeaderField) []byte {
		hb.Reset()
		for _, f := range append([]hpack.HeaderField{
			{Name: ":method", Value: method}, {Name: ":scheme", Value: "https"},
			{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: path},
		}, extra...) {
			enc.WriteField(f)
		}
		return bytes.Clone(hb.Bytes())
	}
	frames(func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer) {
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: get(enc, hb, "GET", "/"), EndHeaders: true, EndStream: true})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: get(enc, hb, "HEAD", "/big"), EndHeaders: true, EndStream: true})
		fr.WritePing(false, [8]byte{1})
	})
	frames(func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer) {
		block := get(enc, hb, "POST", "/body", hpack.HeaderField{Name: "content-length", Value: "10"})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block[:3]})
		fr.WriteContinuation(1, true, block[3:])
		fr.WriteData(1, false, []byte("01234"))
		fr.WriteWindowUpdate(1, 100)
		fr.WriteData(1, true, []byte("56789"))
		fr.WriteRSTStream(1, http2.ErrCodeCancel)
	})
	frames(func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer) {
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: get(enc, hb, "POST", "/body"), EndHeaders: true})
		fr.WriteDataPadded(5, false, []byte("abc"), make([]byte, 10))
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: get(enc, hb, "GET", "/"), EndHeaders: true, EndStream: true})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 7, BlockFragment: get(enc, hb, "GET", "/sleep"), EndHeaders: true, EndStream: true,
			Priority: http2.PriorityParam{StreamDep: 7}})
		fr.WritePriority(9, http2.PriorityParam{StreamDep: 9})
		fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	})
	frames(func(fr *http2.Framer, enc *hpack.Encoder, hb *bytes.Buffer) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 14}, http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: get(enc, hb, "GET", "/", hpack.HeaderField{Name: "connection", Value: "x"}), EndHeaders: true, EndStream: true})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: get(enc, hb, "GET", "/", hpack.HeaderField{Name: "x-big", Value: string(make([]byte, 2000))}), EndHeaders: true, EndStream: true})
		fr.WriteWindowUpdate(0, 1<<31-1)
		fr.WriteData(2, true, []byte("x"))
	})
	seeds = append(seeds, []byte{0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 8, 7, 0xff, 0xff, 0, 0, 8}, nil)
	return seeds
}
