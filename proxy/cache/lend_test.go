package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

type countedRelease struct{ n int }

func (c *countedRelease) Release() { c.n++ }

// refusing is a connection that cannot sendfile.
type refusing struct{}

func (refusing) SendFile(int, int64, int64, bool) (int64, error) {
	return 0, fmt.Errorf("no: %w", errors.ErrUnsupported)
}

// short is a connection whose sendfile finds the file ends early.
type short struct{}

func (short) SendFile(_ int, _, n int64, _ bool) (int64, error) { return n / 2, nil }

func lentFile(t *testing.T, data string) (*BodyFile, *countedRelease) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	rel := &countedRelease{}
	return &BodyFile{File: f, FD: int(f.Fd()), Owner: rel}, rel
}

// Two answers from one descriptor read at their own offsets, and each
// gives the lend back once.
func TestSectionsOfOneFileReadAtTheirOwnOffsets(t *testing.T) {
	b, rel := lentFile(t, "headAAAAAAAAmiddleBBBBBBBBtail")
	a, bb := b.Open(Span{Off: 4, Len: 8}, nil), b.Open(Span{Off: 18, Len: 8}, nil)
	var got [2]bytes.Buffer
	buf := make([]byte, 3)
	for range 3 { // interleaved reads
		for i, s := range []*Section{a, bb} {
			n, _ := s.Read(buf)
			got[i].Write(buf[:n])
		}
	}
	if got[0].String() != "AAAAAAAA" || got[1].String() != "BBBBBBBB" {
		t.Fatalf("read %q and %q", got[0].String(), got[1].String())
	}
	a.Close()
	bb.Close()
	if rel.n != 2 {
		t.Fatalf("%d lends given back, want 2", rel.n)
	}
}

func TestSectionIsCopiedWhenTheConnectionCannotSendfile(t *testing.T) {
	b, _ := lentFile(t, "head0123456789tail")
	s := b.Open(Span{Off: 4, Len: 10}, refusing{})
	defer s.Close()
	var out bytes.Buffer
	if n, err := s.WriteTo(&out); err != nil || n != 10 || out.String() != "0123456789" {
		t.Fatalf("wrote %d %q, %v", n, out.String(), err)
	}
}

// A file that ends before its span (truncated underneath) is an error:
// the server closes the connection rather than answer short.
func TestSectionOfATruncatedFileFails(t *testing.T) {
	b, _ := lentFile(t, "head0123")
	s := b.Open(Span{Off: 4, Len: 10}, short{})
	if _, err := s.WriteTo(io.Discard); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("sendfile short: %v, want ErrUnexpectedEOF", err)
	}
	s.Close()
	s = b.Open(Span{Off: 4, Len: 10}, nil)
	defer s.Close()
	if _, err := s.WriteTo(io.Discard); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("copied short: %v, want ErrUnexpectedEOF", err)
	}
}
