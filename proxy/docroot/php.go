package docroot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
)

// bufferedBody is how much of a script's output is read before deciding:
// a response that ends within it gets a Content-Length and frees the
// worker at once; a longer one is streamed while the worker writes.
const bufferedBody = 64 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// servePHP runs the script on the pool and turns its CGI response into
// resp. The worker's output is read through a pipe by this goroutine
// while a request goroutine (h.wg) runs the FastCGI exchange.
func (h *Handler) servePHP(req *fasthttp.Request, resp *fasthttp.Response, t *target) error {
	if h.php == nil {
		return ErrNoPHP
	}
	stdin, length, cleanup, err := h.requestBody(req)
	if err != nil {
		return err
	}
	params := h.params(req, t, length)
	pr, pw := io.Pipe()
	h.wg.Add(1)
	go h.run(params, stdin, pw, t.scriptName, cleanup)
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(pr)
	if err := readHead(br, resp); err != nil {
		pr.CloseWithError(err)
		readerPool.Put(br)
		return fmt.Errorf("docroot: %s: %w", t.scriptName, err)
	}
	return readBody(br, pr, resp, t.scriptName)
}

// run is the FastCGI exchange of one request; it ends when the script's
// output was read or the reader went away (the pipe fails its writes).
func (h *Handler) run(params []phppool.Param, stdin io.Reader, pw *io.PipeWriter, script string, cleanup func()) {
	defer h.wg.Done()
	defer cleanup()
	stderr := &stderrLog{log: h.log, script: script}
	_, err := h.php.Do(context.Background(), params, stdin, pw, stderr)
	stderr.flush()
	pw.CloseWithError(err) // nil: the reader sees EOF
}

// readHead reads the CGI head into resp: status and headers, minus the
// framing ones the proxy sets itself.
func readHead(br *bufio.Reader, resp *fasthttp.Response) error {
	status, fields, err := phppool.ReadResponseHead(br)
	if err != nil {
		return err
	}
	resp.SetStatusCode(status)
	for _, f := range fields {
		switch {
		case strings.EqualFold(f.Name, "Content-Length"), strings.EqualFold(f.Name, "Transfer-Encoding"),
			strings.EqualFold(f.Name, "Connection"):
			continue
		}
		resp.Header.Add(f.Name, f.Value)
	}
	return nil
}

// readBody reads up to bufferedBody of the output: all of it becomes a
// plain body; more is streamed, the worker held until the client has it.
func readBody(br *bufio.Reader, pr *io.PipeReader, resp *fasthttp.Response, script string) error {
	buf := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(resp.BodyWriter(), io.LimitReader(br, bufferedBody), *buf)
	copyBufs.Put(buf)
	if err == nil && n < bufferedBody {
		err = io.EOF // the output ended within the limit
	}
	switch {
	case errors.Is(err, io.EOF):
		readerPool.Put(br)
		return nil
	case err != nil:
		pr.CloseWithError(err)
		readerPool.Put(br)
		return fmt.Errorf("docroot: %s: output: %w", script, err)
	}
	prefix := append(make([]byte, 0, n), resp.Body()...)
	resp.SetBodyStream(&scriptBody{Reader: io.MultiReader(bytes.NewReader(prefix), br), pr: pr, br: br}, -1)
	return nil
}

// scriptBody streams the rest of a script's output; Close (called by
// fasthttp when the response is done or abandoned) ends the exchange.
type scriptBody struct {
	io.Reader
	pr *io.PipeReader
	br *bufio.Reader
}

func (b *scriptBody) Close() error {
	// The writer sees errClientGone and drains the worker.
	b.pr.CloseWithError(errClientGone)
	b.br.Reset(nil)
	readerPool.Put(b.br)
	return nil
}

var errClientGone = errors.New("docroot: response abandoned")
