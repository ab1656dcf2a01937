package docroot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
)

// bufferedBody is how much of a script's output is read before deciding:
// a response that ends within it gets a Content-Length, leaves in one
// write and frees the worker at once (nginx's fastcgi_buffering); a longer
// one streams through a temporary file (outputSpool), which frees the
// worker when the script ends. At most one such buffer per busy worker
// exists, so the pool size bounds the memory.
const bufferedBody = 1 << 20

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// servePHP runs the script on the pool and turns its CGI response into
// resp. The exchange runs on the request's own goroutine: Begin sends the
// request and waits for the first output, the head and up to bufferedBody
// of the body are read here, and only a longer output outlives the call:
// a pump spools the rest to a temporary file, freeing the worker when the
// script ends, and the client's body stream reads it behind the pump.
// The request body is read whole first (requestBody), so no worker waits
// on a slow client either way.
func (h *Handler) servePHP(c phppool.Client, req *fasthttp.Request, resp *fasthttp.Response, t *target, o *htaccess.Outcome) error {
	if h.php == nil {
		return ErrNoPHP
	}
	stdin, length, cleanup, err := h.requestBody(req)
	if err != nil {
		return err
	}
	if !h.scriptStillThere(t) {
		cleanup()
		refuse(resp, kindNotFound)
		return nil
	}
	params := h.params(req, t, length)
	if o != nil {
		params.ps = appendHtaccessParams(params.ps, req, o)
	}
	ctx := context.Background()
	if c != nil {
		ctx = phppool.WithClient(ctx, c)
	}
	// nil stderr: the pool logs the script's STDERR (PHP warnings) itself,
	// with the pool and worker.
	out, err := h.php.Begin(ctx, params.ps, stdin, nil)
	putParams(params)
	if err != nil {
		cleanup()
		return fmt.Errorf("docroot: %s: %w", t.scriptName, err)
	}
	or := outputReader{out: out}
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(&or)
	err = readHead(br, resp, req.Header.IsHead())
	if err == nil {
		head, _ := br.Peek(br.Buffered()) // buffered bytes: no error
		resp.AppendBody(head)
		resp.AppendBody(or.pending)
	}
	br.Reset(nil)
	readerPool.Put(br)
	if err != nil {
		_ = out.Close() // the rest is drained; the error to report is the head's
		cleanup()
		return fmt.Errorf("docroot: %s: %w", t.scriptName, err)
	}
	return h.readBody(out, resp, t.scriptName, cleanup)
}

// readHead reads the CGI head into resp: status and headers, minus the
// framing ones the proxy sets itself. A HEAD request's script sends no
// body, so its length is the one the script declared, or unknown (-1):
// never the 0 of the empty body.
func readHead(br *bufio.Reader, resp *fasthttp.Response, head bool) error {
	status, fields, err := phppool.ReadResponseHead(br)
	if err != nil {
		return err
	}
	resp.SetStatusCode(status)
	length := -1
	for _, f := range fields {
		switch {
		case strings.EqualFold(f.Name, "Content-Length"):
			if n, err := strconv.Atoi(f.Value); err == nil && n >= 0 {
				length = n
			}
			continue
		case strings.EqualFold(f.Name, "Transfer-Encoding"), strings.EqualFold(f.Name, "Connection"):
			continue
		}
		resp.Header.Add(f.Name, f.Value)
	}
	if head {
		resp.Header.SetContentLength(length)
	}
	return nil
}

// readBody collects up to bufferedBody of the output: all of it becomes
// a plain body; more goes on through an outputSpool, which frees the
// worker as soon as the script ends, whatever the client's pace.
func (h *Handler) readBody(out Output, resp *fasthttp.Response, script string, cleanup func()) error {
	for len(resp.Body()) < bufferedBody {
		b, err := out.Next()
		switch {
		case errors.Is(err, io.EOF):
			cleanup()
			return nil
		case err != nil:
			cleanup()
			return fmt.Errorf("docroot: %s: output: %w", script, err)
		}
		resp.AppendBody(b)
	}
	h.running.add() // until the pump and the client's stream are done: Close waits for them
	sp := startSpool(out, func() { cleanup(); h.running.done() })
	head := append([]byte(nil), resp.Body()...)
	resp.SetBodyStream(&scriptBody{head: head, spool: sp}, -1)
	return nil
}

// outputReader reads a script's output for the CGI head's parser; what
// the parser's buffer did not take stays in pending.
type outputReader struct {
	out     Output
	pending []byte
}

func (o *outputReader) Read(p []byte) (int, error) {
	for len(o.pending) == 0 {
		b, err := o.out.Next()
		if err != nil {
			return 0, err
		}
		o.pending = b
	}
	n := copy(p, o.pending)
	o.pending = o.pending[n:]
	return n, nil
}

// scriptBody streams a script's output: head (read while deciding), then
// the rest from its spool as the pump writes it. Close (called by
// fasthttp when the response is done or abandoned) lets the spool go.
type scriptBody struct {
	head   []byte
	spool  *outputSpool
	closed bool
}

func (b *scriptBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	return b.spool.next(p)
}

// WriteTo writes the output as it arrives, in writes of whatever the
// spool holds (up to spoolChunk): a fast script's output leaves in large
// writes while one that flushes and pauses still streams.
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
	bp := chunkBufs.Get().(*[]byte)
	defer chunkBufs.Put(bp)
	buf := (*bp)[:cap(*bp)]
	for {
		n, err := b.spool.writeNext(w, buf)
		total += int64(n)
		switch {
		case errors.Is(err, io.EOF):
			return total, nil // the end of the output is no error
		case err != nil:
			return total, err
		}
	}
}

// SupportsBodyWriteTo lets fasthttp frame WriteTo's writes as chunks.
func (b *scriptBody) SupportsBodyWriteTo() bool { return true }

func (b *scriptBody) Close() error {
	if !b.closed {
		b.closed = true
		b.spool.abandon() // the pump stops unless the output is complete
	}
	return nil
}

var _ fasthttp.BodyWriterTo = (*scriptBody)(nil)
