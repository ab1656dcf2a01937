package disk

import (
	"bytes"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/cache"
)

// FuzzDecodeNeverPanicsAndRoundTrips: any bytes either fail to decode or
// decode to an object that encodes to the same bytes.
func FuzzDecodeNeverPanicsAndRoundTrips(f *testing.F) {
	e := entry("gzip\x00", "body", "s\x00t")
	f.Add(encode(nil, &object{key: "http://s/", vary: aeVary, variants: []*cache.Entry{e}, docs: []bool{true}}))
	f.Add(encode(nil, &object{key: "k"}))
	f.Add([]byte("RJD1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decode(b)
		if err != nil {
			return
		}
		if again := encode(nil, o); !bytes.Equal(again, b) {
			t.Fatalf("re-encoded %q as %q", b, again)
		}
	})
}
