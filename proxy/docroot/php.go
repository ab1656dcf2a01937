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
// one is streamed while the worker writes. At most one such buffer per
// busy worker exists, so the pool size bounds the memory.
const bufferedBody = 1 << 20

// coalesce bounds how much streamed output waits in one write for more
// that has already arrived (fasthttp writes and flushes every write of a
// body of unknown length: with php-cgi's 4–8 KB records that was a write
// system call per record).
const coalesce = 64 << 10

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// servePHP runs the script on the pool and turns its CGI response into
// resp. The exchange runs on the request's own goroutine: Begin sends the
// request and waits for the first output, the head and up to bufferedBody
// of the body are read here, and only a longer output outlives the call,
// as a body stream that reads the rest from the worker as the client
// takes it.
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
// a plain body; more is streamed, the worker held until the client has it.
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
	h.running.add() // until the stream is closed: Close waits for it
	head := append([]byte(nil), resp.Body()...)
	resp.SetBodyStream(&scriptBody{head: head, out: out, done: func() { cleanup(); h.running.done() }}, -1)
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
// the rest as the worker sends it. Close (called by fasthttp when the
// response is done or abandoned) ends the exchange.
type scriptBody struct {
	head    []byte
	out     Output
	pending []byte // what Read has not copied out of the last piece
	acc     []byte // WriteTo's pieces that wait for the ones already there
	done    func() // once the exchange is over
	ended   bool   // the output was read to its end (else Close abandons it)
}

func (b *scriptBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	for len(b.pending) == 0 {
		piece, err := b.out.Next()
		if err != nil {
			b.ended = errors.Is(err, io.EOF)
			return 0, err
		}
		b.pending = piece
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// WriteTo writes the output as it arrives: a piece is held back while
// more has arrived already (up to coalesce), so a fast script's output
// leaves in large writes while one that flushes and pauses still streams.
func (b *scriptBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	write := func(p []byte) error {
		n, err := w.Write(p)
		total += int64(n)
		return err
	}
	if len(b.head) > 0 {
		if err := write(b.head); err != nil {
			return total, err
		}
		b.head = nil
	}
	for {
		piece, err := b.out.Next()
		if errors.Is(err, io.EOF) {
			b.ended = true
			var werr error
			if len(b.acc) > 0 {
				werr = write(b.acc)
				b.acc = b.acc[:0]
			}
			return total, werr // the end of the output is no error
		}
		if err != nil {
			return total, err
		}
		if b.out.Buffered() > 0 && len(b.acc)+len(piece) <= coalesce {
			b.acc = append(b.acc, piece...) // the piece is only valid until the next one
			continue
		}
		if len(b.acc) > 0 {
			b.acc = append(b.acc, piece...)
			err = write(b.acc)
			b.acc = b.acc[:0]
		} else {
			err = write(piece)
		}
		if err != nil {
			return total, err
		}
	}
}

// SupportsBodyWriteTo lets fasthttp frame WriteTo's writes as chunks.
func (b *scriptBody) SupportsBodyWriteTo() bool { return true }

func (b *scriptBody) Close() error {
	if b.done == nil {
		return nil
	}
	if !b.ended {
		// The client went away: the rest is drained in the background.
		_ = b.out.Close()
	}
	b.done()
	b.done = nil
	return nil
}

var _ fasthttp.BodyWriterTo = (*scriptBody)(nil)
