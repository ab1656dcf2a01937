package docroot

import (
	"context"
	"errors"
	"io"
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

func (f *fakePHP) param(name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.params[name]
	return v, ok
}

type failUpstream struct{}

var errFallback = errors.New("fallback called")

func (failUpstream) Do(*fasthttp.Request, *fasthttp.Response) error { return errFallback }
