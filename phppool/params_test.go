package phppool

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParamsRoundTrip(t *testing.T) {
	long := strings.Repeat("v", 300)
	tests := []struct {
		name   string
		params []Param
		wire   []byte // nil: only round-trip is checked
	}{
		{"short pair uses one-byte lengths", []Param{{"A", "bc"}}, []byte{1, 2, 'A', 'b', 'c'}},
		{"empty value", []Param{{"HTTPS", ""}}, []byte{5, 0, 'H', 'T', 'T', 'P', 'S'}},
		{"127 is still one byte", []Param{{"N", strings.Repeat("v", 127)}}, nil},
		{"128 uses four-byte length", []Param{{"N", strings.Repeat("v", 128)}}, nil},
		{"order is kept", []Param{{"Z", "1"}, {"A", long}, {"M", ""}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := EncodeParams(tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wire != nil && !bytes.Equal(b, tt.wire) {
				t.Fatalf("wire % x, want % x", b, tt.wire)
			}
			got, err := DecodeParams(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.params) {
				t.Fatalf("decoded %q, want %q", got, tt.params)
			}
		})
	}
}

func TestFourByteLengthHasHighBitSet(t *testing.T) {
	b, err := AppendParam(nil, Param{"N", strings.Repeat("v", 200)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 0x80, 0, 0, 200}; !bytes.Equal(b[:5], want) {
		t.Fatalf("lengths % x, want % x", b[:5], want)
	}
}

func TestDecodeParamsRejectsTruncatedInput(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"value length missing", []byte{1}},
		{"four-byte length cut short", []byte{0x80, 0}},
		{"name runs past end", []byte{5, 0, 'a'}},
		{"huge length does not allocate", []byte{0xff, 0xff, 0xff, 0xff, 0, 'a'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeParams(tt.in); !errors.Is(err, ErrParams) {
				t.Fatalf("err = %v, want ErrParams", err)
			}
		})
	}
}

func FuzzDecodeParams(f *testing.F) {
	seed, _ := EncodeParams([]Param{{"SCRIPT_FILENAME", "/srv/index.php"}, {"X", strings.Repeat("y", 200)}})
	f.Add(seed)
	f.Add([]byte{0x80, 0, 0, 1, 0, 'a'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := DecodeParams(b)
		if err != nil {
			return
		}
		enc, err := EncodeParams(ps)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeParams(enc)
		if err != nil {
			t.Fatalf("re-decode of encoded params: %v", err)
		}
		if len(ps) != len(again) || (len(ps) > 0 && !reflect.DeepEqual(ps, again)) {
			t.Fatalf("round trip changed %q to %q", ps, again)
		}
	})
}
