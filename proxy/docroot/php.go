package docroot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
)

// bufferedBody is how much of a script's output is read before deciding:
// a response that ends within it gets a Content-Length, leaves in one
// write and frees the worker at once (nginx's fastcgi_buffering); a longer
// one is streamed while the worker writes. At most one such buffer per
// busy worker exists, so the pool size bounds the memory.
const bufferedBody = 1 << 20

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// servePHP runs the script on the pool and turns its CGI response into
// resp. The worker's output arrives through a spool filled by a request
// goroutine (counted in h.running) that runs the FastCGI exchange.
func (h *Handler) servePHP(c phppool.Client, req *fasthttp.Request, resp *fasthttp.Response, t *target, o *htaccess.Outcome) error {
	if h.php == nil {
		return ErrNoPHP
	}
	stdin, length, cleanup, err := h.requestBody(req)
	if err != nil {
		return err
	}
	params := h.params(req, t, length)
	if o != nil {
		params.ps = appendHtaccessParams(params.ps, req, o)
	}
	sp := newSpool()
	h.running.add()
	ctx := context.Background()
	if c != nil {
		ctx = phppool.WithClient(ctx, c)
	}
	go h.run(ctx, params, stdin, sp, cleanup)
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(sp)
	if err := readHead(br, resp); err != nil {
		sp.closeRead(err)
		sp.readerDone(nil)
		br.Reset(nil)
		readerPool.Put(br)
		return fmt.Errorf("docroot: %s: %w", t.scriptName, err)
	}
	return readBody(br, sp, resp, t.scriptName)
}

// run is the FastCGI exchange of one request; it ends when the script's
// output was read or the reader went away (the spool fails its writes).
func (h *Handler) run(ctx context.Context, params *paramList, stdin io.Reader, sp *spool, cleanup func()) {
	defer h.running.done()
	defer cleanup()
	defer putParams(params)
	defer sp.writerDone()
	// nil stderr: the pool logs the script's STDERR (PHP warnings) itself,
	// with the pool and worker. On success phppool has usually ended the
	// output already (EndOutput), before handing the worker on.
	_, err := h.php.Do(ctx, params.ps, stdin, sp, nil)
	sp.closeWrite(err) // nil: the reader sees EOF
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

// readBody collects up to bufferedBody of the output: all of it becomes
// a plain body; more is streamed, the worker held until the client has it.
func readBody(br *bufio.Reader, sp *spool, resp *fasthttp.Response, script string) error {
	head, _ := br.Peek(br.Buffered()) // buffered bytes: no error
	resp.AppendBody(head)
	br.Reset(nil)
	readerPool.Put(br)
	for len(resp.Body()) < bufferedBody {
		switch err := sp.appendTo(resp); {
		case err == io.EOF:
			sp.readerDone(nil)
			return nil
		case err != nil:
			sp.closeRead(err)
			sp.readerDone(nil)
			return fmt.Errorf("docroot: %s: output: %w", script, err)
		}
	}
	head = append([]byte(nil), resp.Body()...)
	resp.SetBodyStream(&scriptBody{head: head, sp: sp}, -1)
	return nil
}

// scriptBody streams a script's output: head (read while deciding), then
// whatever the spool holds, a chunk per WriteTo write. Close (called by
// fasthttp when the response is done or abandoned) ends the exchange.
type scriptBody struct {
	head  []byte
	sp    *spool
	spare []byte // the last chunk taken, written out: the spool's next buffer
	ended bool   // the output was read to its end (else Close stops the writer)
}

func (b *scriptBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	n, err := b.sp.Read(p)
	b.ended = err == io.EOF
	return n, err
}

// WriteTo writes the output as it arrives, all that is there at once.
func (b *scriptBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	if len(b.head) > 0 {
		n, err := w.Write(b.head)
		total += int64(n)
		if err != nil {
			return total, err
		}
		b.head = nil
	}
	for {
		chunk, err := b.sp.take(b.spare)
		if err == io.EOF {
			b.ended = true
			return total, nil
		}
		if err != nil {
			return total, err
		}
		b.spare = nil // the spool holds it now
		n, werr := w.Write(chunk)
		total += int64(n)
		if werr != nil {
			return total, werr
		}
		b.spare = chunk
	}
}

// SupportsBodyWriteTo lets fasthttp frame WriteTo's writes as chunks.
func (b *scriptBody) SupportsBodyWriteTo() bool { return true }

func (b *scriptBody) Close() error {
	if b.sp == nil {
		return nil
	}
	if !b.ended {
		// The writer sees errClientGone and drains the worker.
		b.sp.closeRead(errClientGone)
	}
	b.sp.readerDone(b.spare)
	b.sp = nil
	return nil
}

var errClientGone = errors.New("docroot: response abandoned")
var _ fasthttp.BodyWriterTo = (*scriptBody)(nil)
