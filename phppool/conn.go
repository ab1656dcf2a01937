package phppool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
)

// requestID is the only request id a Conn uses: one request at a time.
const requestID = 1

// Conn is a keep-alive FastCGI connection to one worker. It serves
// requests one after another (Do serialises callers); BEGIN_REQUEST always
// carries FCGI_KEEP_CONN so the worker keeps the connection open.
type Conn struct {
	nc      net.Conn
	sock    io.ReadWriter // nc's reads and writes: raw system calls on its descriptor when it has one
	broken  atomic.Bool   // set on any I/O or protocol error and on Close
	endSeen atomic.Bool   // END_REQUEST of the current request was read
	failed  atomic.Int32  // which side failed first in the current request (failRead...)

	mu   sync.Mutex // held from begin to end: serialises requests; guards st, ex, br, bw, buf, pbuf, ibuf
	st   exchangeState
	ex   exchange // the current or last request's wire facts
	br   *bufio.Reader
	bw   *bufio.Writer
	buf  []byte // record content being read, maxContent bytes
	pbuf []byte // encoded params of the current request
	ibuf []byte // request body chunk being written, maxContent bytes
}

// NewConn wraps an established connection to a FastCGI responder.
func NewConn(nc net.Conn) *Conn {
	c := &Conn{nc: nc, sock: nc, buf: make([]byte, maxContent)}
	if rs, ok := rawsock.New(nc); ok {
		c.sock = rs
	}
	c.br = bufio.NewReaderSize(rxReader{c}, 32<<10)
	c.bw = bufio.NewWriterSize(txWriter{c}, 16<<10)
	return c
}

// Dial connects to a FastCGI responder at address ("tcp" or "unix").
func Dial(ctx context.Context, network, address string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("phppool: dial %s %s: %w", network, address, err)
	}
	return NewConn(nc), nil
}

// Broken reports whether the Conn must not be used again.
func (c *Conn) Broken() bool { return c.broken.Load() }

// Close closes the connection and marks the Conn broken. It is idempotent.
func (c *Conn) Close() error {
	if c.broken.Swap(true) {
		return nil
	}
	if err := c.nc.Close(); err != nil {
		return fmt.Errorf("phppool: close: %w", err)
	}
	return nil
}

// fail marks the Conn broken and closes the socket.
func (c *Conn) fail() {
	c.failed.CompareAndSwap(failNone, failLocal)
	c.broken.Store(true)
	// The socket is being abandoned; a close error changes nothing.
	_ = c.nc.Close()
}

// Do runs one request: BEGIN_REQUEST (responder, keep-conn), params, the
// body from stdin (nil for none) streamed in records of at most 65535
// bytes, then copies STDOUT records to stdout and STDERR records to stderr
// as they arrive (nil writers discard) until END_REQUEST, whose application
// status it returns. The body is written while the response is read; Do
// returns only after stdin's last Read returned. A trailing empty STDIN
// record may reach the worker after END_REQUEST (php-cgi and net/http/fcgi
// ignore it); body data still unsent at END_REQUEST breaks the Conn.
//
// ctx's deadline becomes the socket deadline; when ctx is done the socket
// is closed and the returned error wraps ctx.Err(). If stdout fails (the
// client went away) the rest of the response is drained so the Conn stays
// usable, and the stdout error is returned. Any other error marks the Conn
// broken.
func (c *Conn) Do(ctx context.Context, params []Param, stdin io.Reader, stdout, stderr io.Writer) (appStatus int, err error) {
	deadline, _ := ctx.Deadline()
	return c.do(ctx, deadline, params, stdin, stdout, stderr)
}

// do is Do with the deadline given apart from ctx (the earlier of the
// two counts), so that a pool's request timeout costs no context and
// timer per request: the socket's deadline enforces it. It is begin, next
// until the end, and end, with the output written to stdout.
func (c *Conn) do(ctx context.Context, deadline time.Time, params []Param, stdin io.Reader, stdout, stderr io.Writer) (appStatus int, err error) {
	if err := c.begin(ctx, deadline, params, stdin); err != nil {
		return 0, err
	}
	var outErr error // first stdout failure; later output is drained
	for {
		b, err := c.next(stderr)
		if err != nil {
			break // the end, or a failure end reports
		}
		if outErr == nil && stdout != nil {
			if _, err := stdout.Write(b); err != nil {
				outErr = fmt.Errorf("phppool: write response: %w: %w", errStdout, err)
			}
		}
	}
	status, err := c.end()
	if err == nil {
		err = outErr
	}
	return status, err
}

// exchangeState is the request a Conn is in, between begin and end.
type exchangeState struct {
	ctx      context.Context
	deadline time.Time
	stop     func() bool // stops the ctx watch; nil when ctx is never done
	written  chan error  // the body writer's result; nil without a body
	status   int         // END_REQUEST's application status
	err      error       // the first failure of the exchange, as next saw it
	ended    bool        // END_REQUEST was read
}

// begin starts a request: it holds the Conn until end, sets the deadline,
// sends BEGIN_REQUEST and the params, and the body from stdin (nil for
// none) — streamed by a goroutine of its own while the response is read,
// since a script may answer before it reads its input. An error means the
// Conn never took the request (broken, ctx done); failures of the
// exchange itself come from next and end.
func (c *Conn) begin(ctx context.Context, deadline time.Time, params []Param, stdin io.Reader) error {
	c.mu.Lock()
	c.ex = exchange{}
	c.failed.Store(failNone)
	if c.broken.Load() {
		c.mu.Unlock()
		return fmt.Errorf("phppool: request: %w", ErrBroken)
	}
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return fmt.Errorf("phppool: request: %w", err)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if err := c.nc.SetDeadline(deadline); err != nil { // zero clears a previous request's deadline
		c.fail()
		c.mu.Unlock()
		return fmt.Errorf("phppool: set deadline: %w", err)
	}
	c.st = exchangeState{ctx: ctx, deadline: deadline}
	if ctx.Done() != nil { // else never cancelled: the deadline is all there is
		c.st.stop = context.AfterFunc(ctx, c.fail)
	}
	c.endSeen.Store(false)
	if err := c.writeHead(params); err != nil {
		c.st.err = err
		return nil
	}
	if stdin == nil {
		c.st.err = c.finishStdin()
		return nil
	}
	written := make(chan error, 1)
	c.st.written = written
	go func() {
		err := c.writeStdin(stdin)
		if err != nil {
			c.fail() // unblocks the reader waiting for a response to a half-sent body
		}
		written <- err
	}()
	return nil
}

// next returns the next piece of the script's STDOUT, valid until the
// following call, copying STDERR records to stderr (nil discards) on the
// way. It returns io.EOF at END_REQUEST, and the failure that ends the
// exchange otherwise (end reports it, mapped).
func (c *Conn) next(stderr io.Writer) ([]byte, error) {
	st := &c.st
	switch {
	case st.err != nil:
		return nil, st.err
	case st.ended:
		return nil, io.EOF
	}
	for {
		b, err := c.record(stderr)
		if err != nil {
			st.err = err
			return nil, err
		}
		if b != nil {
			return b, nil
		}
		if st.ended {
			return nil, io.EOF
		}
	}
}

// record reads one record: STDOUT content is returned, STDERR written to
// stderr, END_REQUEST ends the exchange (st.ended).
func (c *Conn) record(stderr io.Writer) ([]byte, error) {
	h, err := readHeader(c.br)
	if err != nil {
		return nil, err
	}
	if h.ID != requestID {
		return nil, fmt.Errorf("phppool: record type %d for request %d: %w", h.Type, h.ID, ErrProtocol)
	}
	content, err := readContent(c.br, h, c.buf)
	if err != nil {
		return nil, err
	}
	switch h.Type {
	case typeStdout:
		if len(content) > 0 {
			return content, nil
		}
	case typeStderr:
		if stderr != nil && len(content) > 0 {
			// Worker logs are best effort; a failing log must not fail the request.
			_, _ = stderr.Write(content)
		}
	case typeEndRequest:
		c.endSeen.Store(true)
		status, err := c.endRequest(content)
		c.st.status = status
		if err != nil {
			return nil, err
		}
		c.st.ended = true
	default:
		return nil, fmt.Errorf("phppool: unexpected record type %d: %w", h.Type, ErrProtocol)
	}
	return nil, nil
}

// buffered is how many bytes of the response have arrived and not been
// read yet.
func (c *Conn) buffered() int { return c.br.Buffered() }

// drain reads the rest of the response, discarding it: the caller stopped
// reading (its client went away); the Conn stays usable if the response
// ends normally.
func (c *Conn) drain() {
	for {
		if _, err := c.next(nil); err != nil {
			return
		}
	}
}

// end finishes the request begin started and lets the Conn go: it waits
// for the body writer, stops the ctx watch, breaks the Conn on a failed
// exchange and maps the failure (ctx.Err() once ctx fired, a passed
// deadline as context.DeadlineExceeded). The caller has read the response
// to its end (next said io.EOF) or to a failure; one that stopped earlier
// calls drain first.
func (c *Conn) end() (appStatus int, err error) {
	defer c.mu.Unlock()
	st := &c.st
	rerr := st.err
	if errors.Is(rerr, io.EOF) || (!st.ended && rerr == nil) {
		rerr = fmt.Errorf("phppool: response not read to its end: %w", ErrProtocol)
	}
	err = rerr
	if st.written != nil {
		if rerr != nil {
			c.fail() // unblocks a writer stuck on the socket
		}
		werr := <-st.written
		switch {
		case errors.Is(werr, errEndBeforeBody):
			// the request completed; the Conn is broken
		case errors.Is(werr, ErrRequestBody): // the root cause; rerr follows from it
			err = werr
		case rerr != nil:
		case werr != nil:
			err = werr
		}
	}
	status, ctx, deadline, stop := st.status, st.ctx, st.deadline, st.stop
	c.st = exchangeState{}
	if stop != nil && !stop() { // ctx fired: the socket is closed, whatever the exchange saw
		c.broken.Store(true)
		if err != nil {
			return status, fmt.Errorf("phppool: request: %w", ctx.Err())
		}
		return status, nil
	}
	return status, c.roundTripError(err, deadline)
}

// roundTripError breaks the connection on a failed exchange (unless only
// the caller's stdout failed) and reports a passed deadline as
// context.DeadlineExceeded.
func (c *Conn) roundTripError(err error, deadline time.Time) error {
	if err == nil || errors.Is(err, errStdout) {
		return err
	}
	c.fail()
	if !deadline.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("phppool: request: %w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// errStdout marks a failure of the caller's stdout writer, which leaves the
// connection in sync (the response was drained).
var errStdout = errors.New("stdout writer failed")

// errEndBeforeBody: END_REQUEST arrived while body data was still to be
// sent; sending it now would reach the worker after the request ended.
var errEndBeforeBody = errors.New("phppool: END_REQUEST before the request body was sent")

// writeHead buffers BEGIN_REQUEST and the params stream, packing whole
// pairs into each record (php-cgi does not accept a pair split across
// PARAMS records unless the pair alone exceeds 65535 bytes).
func (c *Conn) writeHead(params []Param) error {
	if err := writeOne(c.bw, typeBeginRequest, requestID, beginRequestBody[:]); err != nil {
		return err
	}
	b := c.pbuf[:0]
	for _, p := range params {
		start := len(b)
		var err error
		if b, err = AppendParam(b, p); err != nil {
			return err
		}
		if len(b) > maxContent && start > 0 {
			if err := writeOne(c.bw, typeParams, requestID, b[:start]); err != nil {
				return err
			}
			b = b[:copy(b, b[start:])]
		}
	}
	c.pbuf = b
	if len(b) > 0 {
		if err := writeRecord(c.bw, typeParams, requestID, b); err != nil {
			return err
		}
	}
	return writeOne(c.bw, typeParams, requestID, nil)
}

// finishStdin writes the empty STDIN record and flushes.
func (c *Conn) finishStdin() error {
	if err := writeOne(c.bw, typeStdin, requestID, nil); err != nil {
		return err
	}
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("phppool: send request: %w", err)
	}
	return nil
}

// writeStdin streams the body, flushing each record so a slow body is
// forwarded as it comes.
func (c *Conn) writeStdin(stdin io.Reader) error {
	if c.ibuf == nil {
		c.ibuf = make([]byte, maxContent)
	}
	for {
		n, rerr := stdin.Read(c.ibuf)
		c.ex.bodyRead += int64(max(n, 0))
		if n > 0 {
			if c.endSeen.Load() {
				return errEndBeforeBody
			}
			if err := writeOne(c.bw, typeStdin, requestID, c.ibuf[:n]); err != nil {
				return err
			}
			if err := c.bw.Flush(); err != nil {
				return fmt.Errorf("phppool: send body: %w", err)
			}
		}
		if rerr == io.EOF {
			return c.finishStdin()
		}
		if rerr != nil {
			return fmt.Errorf("phppool: %w: %w", ErrRequestBody, rerr)
		}
	}
}

func (c *Conn) endRequest(content []byte) (int, error) {
	end, err := decodeEndRequest(content)
	if err != nil {
		return 0, err
	}
	if end.ProtocolStatus != statusRequestComplete {
		return int(end.AppStatus), fmt.Errorf("phppool: protocol status %d: %w", end.ProtocolStatus, ErrRejected)
	}
	return int(end.AppStatus), nil
}

var _ io.Closer = (*Conn)(nil)
