package phppool

import (
	"bufio"
	"bytes"
	"errors"
	"testing"
)

func TestRecordSplitsAndPadsContent(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		records []int // content lengths expected on the wire
	}{
		{"empty is one end-of-stream record", 0, []int{0}},
		{"small is padded to eight", 5, []int{5}},
		{"exact multiple of eight has no padding", 16, []int{16}},
		{"max content fits one record", maxContent, []int{maxContent}},
		{"longer content is split", maxContent*2 + 10, []int{maxContent, maxContent, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := bytes.Repeat([]byte{'x'}, tt.size)
			var out bytes.Buffer
			w := bufio.NewWriter(&out)
			if err := writeRecord(w, typeStdin, 1, content); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.Len()%8 != 0 {
				t.Fatalf("wire length %d not a multiple of 8", out.Len())
			}
			r := bufio.NewReader(&out)
			buf := make([]byte, maxContent)
			var got []byte
			for i, want := range tt.records {
				h, err := readHeader(r)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if h.Type != typeStdin || h.ID != 1 || int(h.ContentLength) != want || int(h.PaddingLength) != padFor(want) {
					t.Fatalf("record %d header %+v, want length %d", i, h, want)
				}
				c, err := readContent(r, h, buf)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, c...)
			}
			if r.Buffered() != 0 {
				t.Fatalf("%d bytes left over", r.Buffered())
			}
			if !bytes.Equal(got, content) {
				t.Fatal("content changed in transit")
			}
		})
	}
}

func TestRecordHeaderRejectsUnknownVersion(t *testing.T) {
	b := make([]byte, headerLen)
	header{Version: 2, Type: typeStdout, ID: 1}.encode(b)
	if _, err := decodeHeader(b); !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v, want ErrProtocol", err)
	}
}
