package docroot

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
)

// slowPHP writes more than the buffered part of a response, then holds
// the exchange open until release is closed.
type slowPHP struct{ release chan struct{} }

func (s slowPHP) Do(_ context.Context, _ []phppool.Param, _ io.Reader, stdout, _ io.Writer) (int, error) {
	if _, err := io.WriteString(stdout, "Content-Type: text/plain\r\n\r\n"+strings.Repeat("x", bufferedBody+1)); err != nil {
		return 0, err
	}
	<-s.release
	_, err := io.WriteString(stdout, "end")
	return 0, err
}

func (s slowPHP) Begin(ctx context.Context, ps []phppool.Param, stdin io.Reader, stderr io.Writer) (Output, error) {
	return beginPushed(s.Do, ctx, ps, stdin, stderr)
}

func TestCloseWaitsForScriptStillStreaming(t *testing.T) {
	php := slowPHP{release: make(chan struct{})}
	h, err := New(Config{Root: tree(t)}, php, nil)
	if err != nil {
		t.Fatal(err)
	}
	var req fasthttp.Request
	req.SetRequestURI("/hello.php")
	var resp fasthttp.Response
	if err := h.Do(&req, &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.IsBodyStream() {
		t.Fatal("a response past the buffered size was not streamed")
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := h.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with the script still streaming = %v, want the deadline", err)
	}
	close(php.release)
	body, err := io.ReadAll(resp.BodyStream())
	if err != nil || !strings.HasSuffix(string(body), "end") {
		t.Fatalf("streamed body: %d bytes, %v", len(body), err)
	}
	if err := resp.CloseBodyStream(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close once the output was read = %v", err)
	}
}

// TestStreamedOutputEndsWithoutError: WriteTo reports no error at the end
// of a streamed output, also when its last piece was already written
// (fasthttp would otherwise drop the connection before the last chunk).
func TestStreamedOutputEndsWithoutError(t *testing.T) {
	php := slowPHP{release: make(chan struct{})}
	close(php.release)
	h, err := New(Config{Root: tree(t)}, php, nil)
	if err != nil {
		t.Fatal(err)
	}
	var req fasthttp.Request
	req.SetRequestURI("/hello.php")
	var resp fasthttp.Response
	if err := h.Do(&req, &resp); err != nil {
		t.Fatal(err)
	}
	wt, ok := resp.BodyStream().(io.WriterTo)
	if !ok {
		t.Fatal("a response past the buffered size was not streamed")
	}
	n, err := wt.WriteTo(io.Discard)
	if err != nil || n != bufferedBody+1+int64(len("end")) {
		t.Fatalf("WriteTo = %d, %v; want %d bytes and no error", n, err, bufferedBody+1+len("end"))
	}
	if err := resp.CloseBodyStream(); err != nil {
		t.Fatal(err)
	}
}
