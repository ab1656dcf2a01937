package proxyproto

import (
	"errors"
	"testing"
)

// FuzzParse: whatever the bytes, Parse answers without panicking, with
// one of its errors or a header no longer than the input, whose version
// matches its signature and which names addresses only when proxied. A
// header that parsed parses the same with anything after it.
func FuzzParse(f *testing.F) {
	f.Add([]byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n"))
	f.Add([]byte("PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add(v2(cmdProxy, 0x11, inet4Body("192.0.2.1", "198.51.100.2", 1, 2)))
	f.Add(v2(cmdProxy, 0x21, append(inet6Body("2001:db8::1", "::1", 1, 2), 0x04, 0, 1, 0)))
	f.Add(v2(cmdLocal, 0x00, nil))
	f.Add(withCRC(cmdProxy, 0x11, inet4Body("192.0.2.1", "198.51.100.2", 1, 2), false))
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrIncomplete) && !errors.Is(err, ErrNoHeader) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if n <= 0 || n > len(b) || n > MaxHeader {
			t.Fatalf("header length %d of %d bytes", n, len(b))
		}
		if (h.Version == 1) != hasPrefix(b, v1Sig) || (h.Version == 2) != hasPrefix(b, v2Sig) {
			t.Fatalf("version %d for %q", h.Version, b[:min(len(b), 12)])
		}
		if !h.Proxied && (h.Source.IsValid() || h.Dest.IsValid()) {
			t.Fatalf("addresses without a proxied client: %+v", h)
		}
		if h.Proxied && (!h.Source.Addr().IsValid() || h.Source.Addr().Is4In6()) {
			t.Fatalf("proxied source %v", h.Source)
		}
		h2, n2, err := Parse(append(b[:n:n], "more bytes"...))
		if err != nil || h2 != h || n2 != n {
			t.Fatalf("with bytes after it: %+v %d %v, was %+v %d", h2, n2, err, h, n)
		}
	})
}
