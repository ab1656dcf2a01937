package h2

import (
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// RFC 9113 8.3.1: a host field that disagrees with :authority, or with
// another host field, makes the request malformed: its stream is reset,
// and a host that agrees (in any case) is served.
func TestHostMustAgreeWithAuthority(t *testing.T) {
	env := startTLS(t, echo, nil)
	for _, c := range []struct {
		name   string
		fields []hpack.HeaderField
		reset  bool
	}{
		{"host agreeing in another case", []hpack.HeaderField{{Name: "host", Value: "LOCALHOST"}}, false},
		{"host disagreeing", []hpack.HeaderField{{Name: "host", Value: "b.test"}}, true},
		{"two hosts disagreeing", []hpack.HeaderField{{Name: "host", Value: "localhost"}, {Name: "host", Value: "b.test"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := dialRaw(t, env)
			must(t, r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: r.headers("/h", c.fields...), EndHeaders: true, EndStream: true}))
			f := r.until(func(f http2.Frame) bool {
				switch f := f.(type) {
				case *http2.RSTStreamFrame:
					return f.StreamID == 1
				case *http2.HeadersFrame:
					return f.StreamID == 1
				}
				return false
			})
			rst, isReset := f.(*http2.RSTStreamFrame)
			if isReset != c.reset || isReset && rst.ErrCode != http2.ErrCodeProtocol {
				t.Fatalf("answered with %v, want a reset (PROTOCOL_ERROR) %v", f, c.reset)
			}
		})
	}
}
