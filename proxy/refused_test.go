package proxy

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// readHeader is the error fasthttp's server gets reading raw as a
// request header with a read buffer of size bytes, and the header.
func readHeader(t testing.TB, raw string, size int) (*fasthttp.RequestHeader, error) {
	t.Helper()
	var h fasthttp.RequestHeader
	err := h.Read(bufio.NewReaderSize(strings.NewReader(raw), size))
	return &h, err
}

// TestRefusedRequestReadsWhatFasthttpRead: the line and Host of a request
// fasthttp refused come from the head its error quotes, or "-" (nil)
// when it quotes none.
func TestRefusedRequestReadsWhatFasthttpRead(t *testing.T) {
	long := "GET /" + strings.Repeat("a", 300) + " HTTP/1.1\r\nHost: x.test\r\n\r\n"
	tests := []struct {
		name, raw                      string
		size                           int
		method, uri, proto, line, host string
	}{
		{"garbage", "GARBAGE\r\n\r\n", 4096, "", "", "", "GARBAGE", ""},
		{"four words", "GET /a b HTTP/1.1\r\nHost: Site.test:8080\r\n\r\n", 4096, "", "", "", "GET /a b HTTP/1.1", "Site.test:8080"},
		{"bad header line", "GET /x HTTP/1.1\r\nHost: h.test\r\nBad Header\r\n\r\n", 4096, "GET", "/x", "HTTP/1.1", "", "h.test"},
		{"header over the buffer", "GET /big HTTP/1.1\r\nHost: h.test\r\nX: " + strings.Repeat("b", 8192) + "\r\n\r\n", 4096,
			"GET", "/big", "HTTP/1.1", "", "h.test"},
		{"line longer than the buffer: its start", long, 64, "", "", "", "GET /" + strings.Repeat("a", 59), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := readHeader(t, tt.raw, tt.size)
			if err == nil {
				t.Fatal("fasthttp read it")
			}
			rq := refusedRequest(h, err)
			got := []string{string(rq.method), string(rq.uri), string(rq.proto), string(rq.line), string(rq.host)}
			want := []string{tt.method, tt.uri, tt.proto, tt.line, tt.host}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("got %q, want %q (err %v)", got, want, err)
			}
		})
	}
}

func TestRefusedRequestWithoutQuotedBytesHasNoLine(t *testing.T) {
	var h fasthttp.RequestHeader
	if rq := refusedRequest(&h, fasthttp.ErrBodyTooLarge); rq.line != nil || rq.method != nil || rq.host != nil {
		t.Errorf("%+v, want nothing read", rq)
	}
}

// FuzzRefusedRequest: whatever a client sends, what is recovered of a
// refused request is no more than it sent: its line is a prefix of the
// first line sent, its Host a value it sent, and nothing panics.
func FuzzRefusedRequest(f *testing.F) {
	for _, s := range []string{"GARBAGE\r\n\r\n", "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", "\x16\x03\x01\x00\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("y", 300) + "\r\n\r\n", "GET /\"q\" HTTP/1.1\r\n\r\n", ", contents: \"x\"\r\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, err := readHeader(t, raw, 256)
		if err == nil {
			return
		}
		rq := refusedRequest(h, err)
		if h.Len() > 0 {
			return // parsed by fasthttp itself
		}
		line := rq.line
		if rq.method != nil {
			line = bytes.Join([][]byte{rq.method, rq.uri, rq.proto}, []byte(" "))
		}
		first, _, _ := strings.Cut(strings.TrimLeft(raw, "\r\n"), "\n")
		if !strings.HasPrefix(first, string(line)) {
			t.Fatalf("line %q is not what was sent: %q", line, first)
		}
		if rq.host != nil && !strings.Contains(raw, string(rq.host)) {
			t.Fatalf("host %q was not sent in %q", rq.host, raw)
		}
	})
}
