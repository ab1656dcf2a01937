package docroot

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// piecesOutput is an Output handing out pieces sent on a channel; closing
// the channel ends it (io.EOF). It records when it was read to its end
// and whether it was abandoned.
type piecesOutput struct {
	pieces    chan []byte
	ended     chan struct{} // closed once Next returned io.EOF
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

func newPiecesOutput() *piecesOutput {
	return &piecesOutput{pieces: make(chan []byte), ended: make(chan struct{}), closed: make(chan struct{})}
}

func (o *piecesOutput) Next() ([]byte, error) {
	b, ok := <-o.pieces
	if !ok {
		close(o.ended)
		return nil, io.EOF
	}
	return b, nil
}

func (o *piecesOutput) Buffered() int { return 0 }

func (o *piecesOutput) Close() error {
	o.closeOnce.Do(func() { close(o.closed) })
	return nil
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not within 5s", what)
	}
}

// TestSpoolTakesTheOutputBeforeTheClientReadsIt: the pump reads the
// whole output (the worker is free) while the client has read nothing;
// the client then gets every byte, in order, and done runs once the
// client's side is closed too.
func TestSpoolTakesTheOutputBeforeTheClientReadsIt(t *testing.T) {
	out := newPiecesOutput()
	done := make(chan struct{})
	s := startSpool(out, func() { close(done) })
	var want bytes.Buffer
	for i := range 50 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, 10000+i)
		want.Write(p)
		out.pieces <- p
	}
	close(out.pieces)
	waitClosed(t, out.ended, "the pump reading the output to its end")
	body := &scriptBody{head: []byte("HEAD"), spool: s}
	var got bytes.Buffer
	if _, err := body.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), append([]byte("HEAD"), want.Bytes()...)) {
		t.Fatalf("client got %d bytes, want %d", got.Len(), 4+want.Len())
	}
	select {
	case <-done:
		t.Fatal("done before the client's side was closed")
	default:
	}
	body.Close()
	waitClosed(t, done, "done after Close")
	select {
	case <-out.closed:
		t.Fatal("a complete output was abandoned")
	default:
	}
}

// TestSpoolStreamsWhileThePumpWrites: the client reads each piece as it
// arrives, before the output ends.
func TestSpoolStreamsWhileThePumpWrites(t *testing.T) {
	out := newPiecesOutput()
	s := startSpool(out, func() {})
	body := &scriptBody{spool: s}
	defer body.Close()
	buf := make([]byte, 100)
	for _, piece := range []string{"one", "two", "three"} {
		out.pieces <- []byte(piece)
		n, err := io.ReadAtLeast(body, buf, len(piece))
		if err != nil || string(buf[:n]) != piece {
			t.Fatalf("read %q, %v; want %q while the output goes on", buf[:n], err, piece)
		}
	}
	close(out.pieces)
	if n, err := body.Read(buf); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %d, %v", n, err)
	}
}

// TestSpoolAbandonedByTheClientLetsTheOutputGo: a client gone mid-output
// makes the pump abandon the rest (the pool drains it) and done run.
func TestSpoolAbandonedByTheClientLetsTheOutputGo(t *testing.T) {
	out := newPiecesOutput()
	done := make(chan struct{})
	s := startSpool(out, func() { close(done) })
	out.pieces <- []byte("first")
	body := &scriptBody{spool: s}
	body.Close()
	out.pieces <- []byte("second") // the pump takes it, then sees the client gone
	waitClosed(t, out.closed, "the output abandoned")
	waitClosed(t, done, "done")
}

// TestRequestBodyIsReadWholeBeforePHP: a streamed body (sized or chunked)
// is read to its end, past MaxBodyInMemory into a file, and a client that
// sends less than it declared fails the request instead of reaching PHP.
func TestRequestBodyIsReadWholeBeforePHP(t *testing.T) {
	h := &Handler{cfg: Config{MaxBodyInMemory: 1000}}
	tests := []struct {
		name     string
		body     string
		declared int
		wantErr  bool
	}{
		{"small, sized", "a=1", 3, false},
		{"large, sized", strings.Repeat("x", 5000), 5000, false},
		{"large, chunked", strings.Repeat("y", 5000), -1, false},
		{"short of its length", strings.Repeat("z", 2000), 3000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req fasthttp.Request
			req.SetBodyStream(strings.NewReader(tt.body), tt.declared)
			r, n, cleanup, err := h.requestBody(&req)
			if tt.wantErr {
				if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("err %v, want io.ErrUnexpectedEOF", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			got, err := io.ReadAll(r)
			if err != nil || string(got) != tt.body || n != int64(len(tt.body)) {
				t.Fatalf("body of %d bytes (length %d), %v; want %d", len(got), n, err, len(tt.body))
			}
		})
	}
}

// TestSpoolKeepsTheOrderAcrossMemoryAndFile: output that goes to memory,
// overflows to the file, is caught up with and goes to memory again
// reaches the client in order, whatever the two sides' pace.
func TestSpoolKeepsTheOrderAcrossMemoryAndFile(t *testing.T) {
	out := newPiecesOutput()
	s := startSpool(out, func() {})
	body := &scriptBody{spool: s}
	defer body.Close()
	var want bytes.Buffer
	go func() {
		for i := range 400 {
			p := bytes.Repeat([]byte{byte(i)}, 1+(i*7919)%30000)
			want.Write(p)
			out.pieces <- p
		}
		close(out.pieces)
	}()
	var got bytes.Buffer
	buf := make([]byte, 70000)
	for i := 0; ; i++ {
		n, err := body.Read(buf[:1+(i*104729)%len(buf)])
		got.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	<-out.ended
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("client got %d bytes, want %d (or in another order)", got.Len(), want.Len())
	}
}
