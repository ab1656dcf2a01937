package docroot

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
)

// fakePHP answers with out (a CGI response) and records what it got.
type fakePHP struct {
	mu     sync.Mutex
	out    string
	err    error
	params map[string]string
	stdin  []byte
}

func (f *fakePHP) Do(_ context.Context, ps []phppool.Param, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	f.mu.Lock()
	f.params = map[string]string{}
	f.stdin = nil
	for _, p := range ps {
		f.params[p.Name] = p.Value
	}
	if stdin != nil {
		f.stdin, _ = io.ReadAll(stdin)
	}
	out, err := f.out, f.err
	f.mu.Unlock()
	if stderr != nil { // nil: the pool logs it, as phppool.Pool does
		io.WriteString(stderr, "PHP Notice: something\n")
	}
	if _, werr := io.WriteString(stdout, out); werr != nil {
		return 0, werr
	}
	return 0, err
}

func (f *fakePHP) Begin(ctx context.Context, ps []phppool.Param, stdin io.Reader, stderr io.Writer) (Output, error) {
	return beginPushed(f.Do, ctx, ps, stdin, stderr)
}

// beginPushed runs a fake that writes its output to stdout, as Pool.Do
// does, behind the pull interface: its output comes through a pipe.
func beginPushed(do func(context.Context, []phppool.Param, io.Reader, io.Writer, io.Writer) (int, error),
	ctx context.Context, ps []phppool.Param, stdin io.Reader, stderr io.Writer) (Output, error) {
	ps = slices.Clone(ps) // the caller reuses the list once Begin returned
	pr, pw := io.Pipe()
	go func() {
		_, err := do(ctx, ps, stdin, pw, stderr)
		pw.CloseWithError(err) // nil: the reader sees EOF
	}()
	return &pipeOutput{r: pr, buf: make([]byte, 32<<10)}, nil
}

// pipeOutput is an Output read from a pipe.
type pipeOutput struct {
	r   *io.PipeReader
	buf []byte
}

func (o *pipeOutput) Next() ([]byte, error) {
	n, err := o.r.Read(o.buf)
	if n > 0 {
		return o.buf[:n], nil
	}
	return nil, err
}

func (o *pipeOutput) Buffered() int { return 0 }

func (o *pipeOutput) Close() error { return o.r.CloseWithError(errors.New("abandoned")) }

func (f *fakePHP) param(name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.params[name]
	return v, ok
}

type failUpstream struct{}

var errFallback = errors.New("fallback called")

func (failUpstream) Do(*fasthttp.Request, *fasthttp.Response) error { return errFallback }
