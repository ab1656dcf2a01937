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

	mu   sync.Mutex // serialises Do and guards ex, br, bw, buf, pbuf, ibuf
	ex   exchange   // the current or last request's wire facts
	br   *bufio.Reader
	bw   *bufio.Writer
	buf  []byte // record content being read, maxContent bytes
	pbuf []byte // encoded params of the current request
	ibuf []byte // request body chunk being written, maxContent bytes
}

// NewConn wraps an established connection to a FastCGI responder.
func NewConn(nc net.Conn) *Conn {
	c := &Conn{nc: nc, sock: nc, buf: make([]byte, maxContent)}
	if rs, ok := newRawSock(nc); ok {
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
// timer per request: the socket's deadline enforces it.
func (c *Conn) do(ctx context.Context, deadline time.Time, params []Param, stdin io.Reader, stdout, stderr io.Writer) (appStatus int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ex = exchange{}
	c.failed.Store(failNone)
	if c.broken.Load() {
		return 0, fmt.Errorf("phppool: request: %w", ErrBroken)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("phppool: request: %w", err)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if err := c.nc.SetDeadline(deadline); err != nil { // zero clears a previous request's deadline
		c.fail()
		return 0, fmt.Errorf("phppool: set deadline: %w", err)
	}
	if ctx.Done() == nil { // never cancelled: the deadline is all there is
		status, err := c.roundTrip(params, stdin, stdout, stderr)
		return status, c.roundTripError(err, deadline)
	}
	stop := context.AfterFunc(ctx, c.fail)
	status, err := c.roundTrip(params, stdin, stdout, stderr)
	if !stop() { // ctx fired: the socket is closed, whatever roundTrip saw
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

// roundTrip writes the request and reads the response.
func (c *Conn) roundTrip(params []Param, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	c.endSeen.Store(false)
	if err := c.writeHead(params); err != nil {
		return 0, err
	}
	if stdin == nil {
		if err := c.finishStdin(); err != nil {
			return 0, err
		}
		return c.readResponse(stdout, stderr)
	}
	// The body is written while the response is read: a script may
	// answer before it reads its input, and neither side may block the other.
	done := make(chan error, 1)
	go func() {
		err := c.writeStdin(stdin)
		if err != nil {
			c.fail() // unblocks the reader waiting for a response to a half-sent body
		}
		done <- err
	}()
	status, rerr := c.readResponse(stdout, stderr)
	if rerr != nil && !errors.Is(rerr, errStdout) {
		c.fail() // unblocks a writer stuck on the socket
	}
	werr := <-done
	switch {
	case errors.Is(werr, errEndBeforeBody):
		return status, rerr // the request completed; the Conn is broken
	case errors.Is(werr, ErrRequestBody): // the root cause; rerr follows from it
		return status, werr
	case rerr != nil && !errors.Is(rerr, errStdout):
		return status, rerr
	case werr != nil:
		return status, werr
	}
	return status, rerr
}

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

// readResponse copies STDOUT and STDERR until END_REQUEST.
func (c *Conn) readResponse(stdout, stderr io.Writer) (int, error) {
	var outErr error // first stdout failure; later output is drained
	for {
		h, err := readHeader(c.br)
		if err != nil {
			return 0, err
		}
		if h.ID != requestID {
			return 0, fmt.Errorf("phppool: record type %d for request %d: %w", h.Type, h.ID, ErrProtocol)
		}
		content, err := readContent(c.br, h, c.buf)
		if err != nil {
			return 0, err
		}
		switch h.Type {
		case typeStdout:
			if outErr == nil && stdout != nil && len(content) > 0 {
				if _, err := stdout.Write(content); err != nil {
					outErr = fmt.Errorf("phppool: write response: %w: %w", errStdout, err)
				}
			}
		case typeStderr:
			if stderr != nil && len(content) > 0 {
				// Worker logs are best effort; a failing log must not fail the request.
				_, _ = stderr.Write(content)
			}
		case typeEndRequest:
			c.endSeen.Store(true)
			return c.endRequest(content, outErr)
		default:
			return 0, fmt.Errorf("phppool: unexpected record type %d: %w", h.Type, ErrProtocol)
		}
	}
}

func (c *Conn) endRequest(content []byte, outErr error) (int, error) {
	end, err := decodeEndRequest(content)
	if err != nil {
		return 0, err
	}
	if end.ProtocolStatus != statusRequestComplete {
		return int(end.AppStatus), fmt.Errorf("phppool: protocol status %d: %w", end.ProtocolStatus, ErrRejected)
	}
	return int(end.AppStatus), outErr
}

var _ io.Closer = (*Conn)(nil)
