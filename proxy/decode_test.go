package proxy

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// encodeAs applies codings to body in the order listed, as an origin
// announcing Content-Encoding: codings would have.
func encodeAs(t testing.TB, body []byte, codings string) []byte {
	t.Helper()
	for _, c := range strings.Split(codings, ",") {
		switch strings.ToLower(strings.TrimSpace(c)) {
		case "gzip", "x-gzip":
			body = fasthttp.AppendGzipBytes(nil, body)
		case "br":
			body = fasthttp.AppendBrotliBytes(nil, body)
		case "identity", "":
		default:
			t.Fatalf("no encoder for %q", c)
		}
	}
	return body
}

func TestDecodeBodyUndoesEveryCodingFromTheLast(t *testing.T) {
	plain := []byte(strings.Repeat("<p>fragment</p><esi:include src=/f/>", 200))
	for _, codings := range []string{"", "identity", "gzip", "GZIP", "x-gzip", "br", "gzip, br", "br,gzip", "gzip, identity, br", "br, br", " gzip ,, br "} {
		t.Run(codings, func(t *testing.T) {
			got, err := decodeBody(encodeAs(t, plain, codings), []byte(codings), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain) {
				t.Fatalf("decoded %d bytes, want the %d plain ones", len(got), len(plain))
			}
		})
	}
}

func TestDecodeBodyReturnsAnIdentityBodyAsItIs(t *testing.T) {
	body := []byte("plain")
	for _, codings := range []string{"", "identity", " , identity"} {
		got, err := decodeBody(body, []byte(codings), 10)
		if err != nil || &got[0] != &body[0] {
			t.Fatalf("%q: decodeBody copied or failed (%v)", codings, err)
		}
	}
	if got, err := decodeBody(nil, []byte("gzip"), 10); err != nil || len(got) != 0 {
		t.Fatalf("empty gzip body: %q %v, want empty", got, err)
	}
}

func TestDecodeBodyFails(t *testing.T) {
	plain := bytes.Repeat([]byte("a"), 1<<20)
	bomb := encodeAs(t, plain, "gzip") // ~1 KiB that inflates to 1 MiB
	tests := []struct {
		name    string
		body    []byte
		codings string
		limit   int64
		want    error // nil: any error
	}{
		{"unknown coding", []byte("x"), "zstd", 100, errUnknownCoding},
		{"deflate is not undone", []byte("x"), "deflate", 100, errUnknownCoding},
		{"unknown coding under a known one", encodeAs(t, []byte("x"), "gzip"), "compress, gzip", 100, errUnknownCoding},
		{"corrupt gzip", []byte("\x1f\x8b not gzip at all"), "gzip", 100, nil},
		{"truncated gzip", bomb[:len(bomb)/2], "gzip", 2 << 20, nil},
		{"corrupt br", []byte("not brotli"), "br", 100, nil},
		{"gzip announced, identity sent", []byte("<html>"), "gzip", 100, nil},
		{"gzip bomb past the limit", bomb, "gzip", 64 << 10, errDecodedTooLarge},
		{"br bomb past the limit", encodeAs(t, plain, "br"), "br", 64 << 10, errDecodedTooLarge},
		{"nested bomb past the limit", encodeAs(t, plain, "gzip, br"), "gzip, br", 64 << 10, errDecodedTooLarge},
		{"more codings than an origin applies", encodeAs(t, []byte("x"), "gzip, gzip, gzip, gzip, gzip"), "gzip, gzip, gzip, gzip, gzip", 100, errTooManyCodings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeBody(tt.body, []byte(tt.codings), tt.limit)
			if err == nil {
				t.Fatalf("decoded %d bytes, want an error", len(got))
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if errors.Is(err, fasthttp.ErrBodyTooLarge) {
				t.Fatalf("error %v is fasthttp.ErrBodyTooLarge, which means 413", err)
			}
		})
	}
}

func TestAcceptsCodings(t *testing.T) {
	tests := []struct {
		accept, codings string
		want            bool
	}{
		{"", "", true},
		{"", "identity", true},
		{"", "gzip", false},
		{"gzip", "gzip", true},
		{"gzip;q=0", "gzip", false},
		{"gzip", "gzip, br", false},
		{"br, gzip", "gzip, br", true},
		{"*", "zstd", true},
	}
	for _, tt := range tests {
		if got := acceptsCodings([]byte(tt.accept), []byte(tt.codings)); got != tt.want {
			t.Errorf("acceptsCodings(%q, %q) = %v, want %v", tt.accept, tt.codings, got, tt.want)
		}
	}
}

func TestKeepDecodableCodingsNarrowsAcceptEncoding(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"gzip, deflate, br, zstd", "gzip, br"},
		{"gzip;q=0.5, zstd;q=1, br;q=0.8", "gzip;q=0.5, br;q=0.8"},
		{"zstd", ""},
		{"*", "gzip, br"},
		{"*;q=0", ""},
		{"identity, deflate", "identity"},
		{"gzip, br", "gzip, br"},
	}
	for _, tt := range tests {
		var h fasthttp.RequestHeader
		if tt.in != "" {
			h.Set("Accept-Encoding", tt.in)
		}
		keepDecodableCodings(&h)
		if got := string(h.Peek("Accept-Encoding")); got != tt.want {
			t.Errorf("Accept-Encoding %q became %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzDecodeBody(f *testing.F) {
	for _, s := range []struct{ body, codings string }{
		{"plain", ""}, {"plain", "gzip"}, {"plain", "br"}, {"plain", "gzip, br"},
		{"\x1f\x8b\x08\x00\x00\x00\x00\x00", "gzip"}, {"x", "zstd, gzip"}, {"x", ",,"},
	} {
		f.Add([]byte(s.body), s.codings, true, uint16(100))
	}
	f.Fuzz(func(t *testing.T, body []byte, codings string, encode bool, limit uint16) {
		lim := int64(limit) + 1
		in := body
		if encode && strings.Count(codings, ",") < 8 && onlyEncodable(codings) {
			in = encodeAs(t, body, codings)
		}
		out, err := decodeBody(in, []byte(codings), lim)
		if err != nil {
			if errors.Is(err, fasthttp.ErrBodyTooLarge) {
				t.Fatalf("error %v reads as the client's body too large", err)
			}
			return
		}
		if int64(len(out)) > lim && countCodings([]byte(codings)) > 0 {
			t.Fatalf("decoded %d bytes past the limit %d", len(out), lim)
		}
		if in := encode && strings.Count(codings, ",") < 8 && onlyEncodable(codings); in && len(body) > 0 && !bytes.Equal(out, body) {
			t.Fatalf("round trip through %q changed the body", codings)
		}
	})
}

// onlyEncodable reports whether encodeAs knows every coding in codings.
func onlyEncodable(codings string) bool {
	for _, c := range strings.Split(codings, ",") {
		switch strings.TrimSpace(strings.ToLower(c)) {
		case "gzip", "x-gzip", "br", "identity", "":
		default:
			return false
		}
	}
	return true
}
