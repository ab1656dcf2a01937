package h2

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// rawConn is a client that writes HTTP/2 frames by hand.
type rawConn struct {
	t   *testing.T
	c   net.Conn
	fr  *http2.Framer
	hb  bytes.Buffer
	enc *hpack.Encoder
}

func dialRaw(t *testing.T, env *tlsEnv) *rawConn {
	t.Helper()
	d := &net.Dialer{Timeout: 2 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", env.addr, env.tlsConfig("h2"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := &rawConn{t: t, c: c, fr: http2.NewFramer(c, c)}
	r.fr.AllowIllegalWrites = true
	r.enc = hpack.NewEncoder(&r.hb)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := r.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return r
}

// headers encodes a GET for path plus extra fields.
func (r *rawConn) headers(path string, extra ...hpack.HeaderField) []byte {
	r.hb.Reset()
	for _, f := range append([]hpack.HeaderField{
		{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: path},
	}, extra...) {
		r.enc.WriteField(f)
	}
	return bytes.Clone(r.hb.Bytes())
}

func (r *rawConn) get(id uint32, path string) {
	r.t.Helper()
	err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.headers(path), EndHeaders: true, EndStream: true})
	if err != nil {
		r.t.Fatal(err)
	}
}

// until reads frames until match returns true, the connection ends
// (returns nil) or 5 s pass (fails), at most 10000 frames.
func (r *rawConn) until(match func(http2.Frame) bool) http2.Frame {
	r.t.Helper()
	for range 10000 {
		f, err := r.fr.ReadFrame()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				r.t.Fatal("no answer from the server")
			}
			return nil // closed: an acceptable answer to abuse
		}
		if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
			r.fr.WriteSettingsAck()
		}
		if match(f) {
			return f
		}
	}
	r.t.Fatal("too many frames")
	return nil
}

func isGoAway(f http2.Frame) bool { _, ok := f.(*http2.GoAwayFrame); return ok }

func goAwayCode(t *testing.T, f http2.Frame) http2.ErrCode {
	t.Helper()
	if f == nil {
		return http2.ErrCodeNo // closed without GOAWAY
	}
	return f.(*http2.GoAwayFrame).ErrCode
}

// stillServes checks that the server answers a normal request afterwards.
func stillServes(t *testing.T, env *tlsEnv) {
	t.Helper()
	resp, body := get(t, env.h2Client(t), env.url("/after"))
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "hello /after") {
		t.Fatalf("after abuse: %d %q", resp.StatusCode, body)
	}
}

func TestProtocolErrorsAnsweredWithoutCrashing(t *testing.T) {
	env := startTLS(t, echo, nil)
	tests := []struct {
		name  string
		abuse func(r *rawConn)
		want  []http2.ErrCode // acceptable GOAWAY codes; ErrCodeNo also stands for a plain close
	}{
		{"DATA on stream 0", func(r *rawConn) {
			must(r.t, r.fr.WriteData(0, true, []byte("x")))
		}, []http2.ErrCode{http2.ErrCodeProtocol}},
		{"undecodable header block", func(r *rawConn) {
			r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0xff, 0xff, 0xff, 0xff, 0xff}, EndHeaders: true, EndStream: true})
		}, []http2.ErrCode{http2.ErrCodeCompression}},
		{"frame over the advertised maximum size (1 MiB)", func(r *rawConn) {
			r.fr.WriteRawFrame(http2.FrameData, 0, 1, make([]byte, 1<<20+1)) // the server may close before it is all written
		}, []http2.ErrCode{http2.ErrCodeFrameSize}},
		{"even stream id", func(r *rawConn) {
			r.get(2, "/")
		}, []http2.ErrCode{http2.ErrCodeProtocol}},
		{"window update overflow", func(r *rawConn) {
			r.fr.WriteWindowUpdate(0, 1<<31-1)
			r.fr.WriteWindowUpdate(0, 1<<31-1)
		}, []http2.ErrCode{http2.ErrCodeFlowControl}},
		{"CONTINUATION without HEADERS", func(r *rawConn) {
			r.fr.WriteContinuation(1, true, r.headers("/"))
		}, []http2.ErrCode{http2.ErrCodeProtocol}},
		{"garbage frames", func(r *rawConn) {
			r.c.Write(bytes.Repeat([]byte{0x00, 0x00, 0x08, 0x07, 0xff}, 200))
		}, []http2.ErrCode{http2.ErrCodeProtocol, http2.ErrCodeFrameSize}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dialRaw(t, env)
			tt.abuse(r)
			code := goAwayCode(t, r.until(isGoAway))
			if code != http2.ErrCodeNo && !contains(tt.want, code) {
				t.Errorf("GOAWAY %v, want one of %v", code, tt.want)
			}
			stillServes(t, env)
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func contains(codes []http2.ErrCode, c http2.ErrCode) bool {
	for _, x := range codes {
		if x == c {
			return true
		}
	}
	return false
}

func TestTooManyStreamsRefused(t *testing.T) {
	release := make(chan struct{})
	env := startTLS(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/after" {
			echo(ctx)
			return
		}
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		ctx.SetBodyString("done")
	}, func(c *Config) { c.MaxConcurrentStreams = 4 })
	r := dialRaw(t, env)
	// Wait for the server's SETTINGS (and ack ours) so the limit holds.
	r.until(func(f http2.Frame) bool { s, ok := f.(*http2.SettingsFrame); return ok && s.IsAck() })
	for id := uint32(1); id <= 13; id += 2 { // 7 streams, 4 allowed
		r.get(id, "/")
	}
	refused := map[uint32]bool{}
	r.until(func(f http2.Frame) bool {
		if rst, ok := f.(*http2.RSTStreamFrame); ok {
			refused[rst.StreamID] = true
		}
		return len(refused) == 3 || isGoAway(f)
	})
	if len(refused) != 3 || !refused[9] || !refused[11] || !refused[13] {
		t.Errorf("reset streams %v, want 9, 11 and 13", refused)
	}
	close(release)
	answered := 0
	r.until(func(f http2.Frame) bool {
		if d, ok := f.(*http2.DataFrame); ok && d.StreamEnded() {
			answered++
		}
		return answered == 4
	})
	if answered != 4 {
		t.Errorf("%d streams answered, want 4", answered)
	}
	stillServes(t, env)
}

func TestHugeHeadersRejected(t *testing.T) {
	env := startTLS(t, echo, nil)
	t.Run("one header over the limit", func(t *testing.T) {
		r := dialRaw(t, env)
		block := r.headers("/", hpack.HeaderField{Name: "x-huge", Value: strings.Repeat("a", 64<<10)})
		// HEADERS then CONTINUATIONs of at most 16 KiB each.
		first, rest := block[:16<<10], block[16<<10:]
		r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndStream: true})
		for len(rest) > 0 {
			n := min(len(rest), 16<<10)
			if err := r.fr.WriteContinuation(1, n == len(rest), rest[:n]); err != nil {
				break // the server may already have closed
			}
			rest = rest[n:]
		}
		var status string
		f := r.until(func(f http2.Frame) bool {
			if h, ok := f.(*http2.HeadersFrame); ok {
				dec := hpack.NewDecoder(4096, nil)
				fields, _ := dec.DecodeFull(h.HeaderBlockFragment())
				for _, hf := range fields {
					if hf.Name == ":status" {
						status = hf.Value
					}
				}
				return true
			}
			_, rst := f.(*http2.RSTStreamFrame)
			return rst || isGoAway(f)
		})
		if f != nil && status != "" && status != "431" {
			t.Errorf("status %s, want 431 or a reset", status)
		}
		t.Logf("answer: %T status %q", f, status)
		stillServes(t, env)
	})
	t.Run("CONTINUATION flood", func(t *testing.T) {
		r := dialRaw(t, env)
		r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: r.headers("/")})
		chunk := bytes.Repeat([]byte{0x40, 0x01, 'x', 0x01, 'y'}, 200) // literal x: y, 1000 bytes
		sent := 0
		for ; sent < 5000; sent++ { // 5 MB at most; the server cuts it far sooner
			if err := r.fr.WriteContinuation(1, false, chunk); err != nil {
				break
			}
		}
		r.until(isGoAway)
		t.Logf("server stopped the flood after %d CONTINUATION frames written", sent)
		stillServes(t, env)
	})
}

// A client that opens and resets streams as fast as it can (CVE-2023-44487)
// does not take the server down.
func TestRapidResetSurvived(t *testing.T) {
	env := startTLS(t, echo, nil)
	r := dialRaw(t, env)
	var err error
	for id := uint32(1); id < 4000 && err == nil; id += 2 {
		r.get(id, "/")
		err = r.fr.WriteRSTStream(id, http2.ErrCodeCancel)
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		t.Logf("writes stopped: %v", err)
	}
	stillServes(t, env)
}

func TestHTTP1OnNegotiatedH2Closed(t *testing.T) {
	env := startTLS(t, echo, nil)
	d := &net.Dialer{Timeout: 2 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", env.addr, env.tlsConfig("h2"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("connection not closed: %v", err)
	}
	stillServes(t, env)
}
