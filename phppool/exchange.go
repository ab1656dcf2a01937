package phppool

import (
	"io"
	"time"
)

// exchange is what one Conn.Do did on the wire. The pool reads it after
// Do returns to decide whether a failed request may go to another worker
// (nothing received, body untouched) and to time a resumed worker's first
// response record.
type exchange struct {
	received  int64     // bytes read from the worker
	firstRecv time.Time // when the first of them arrived
	bodyRead  int64     // bytes read from stdin (written by the body goroutine)
	sendFirst bool      // the first I/O failure was a write of the request
}

// Which side of the socket failed first in the current request. Only the
// first failure is meaningful: once anything fails the socket is closed,
// and every later read or write fails as a consequence.
const (
	failNone  int32 = iota
	failRead        // a read from the worker (EOF, reset, deadline)
	failWrite       // a write of the request
	failLocal       // the Conn closed the socket itself (ctx, body error, protocol)
)

// rxReader counts what the worker sent for the current request. It sits
// under the Conn's bufio.Reader, so it is called only from readResponse.
type rxReader struct{ c *Conn }

func (r rxReader) Read(b []byte) (int, error) {
	n, err := r.c.sock.Read(b)
	if n > 0 {
		if r.c.ex.received == 0 {
			r.c.ex.firstRecv = time.Now()
		}
		r.c.ex.received += int64(n)
	}
	if err != nil {
		r.c.failed.CompareAndSwap(failNone, failRead)
	}
	return n, err
}

// txWriter notes a failed write of the request; it sits under the Conn's
// bufio.Writer.
type txWriter struct{ c *Conn }

func (w txWriter) Write(b []byte) (int, error) {
	n, err := w.c.sock.Write(b)
	if err != nil {
		w.c.failed.CompareAndSwap(failNone, failWrite)
	}
	return n, err
}

// lastExchange reports the wire facts of the Conn's last Do. Call it only
// from the goroutine that called Do, after Do returned.
func (c *Conn) lastExchange() exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	ex := c.ex
	ex.sendFirst = c.failed.Load() == failWrite
	return ex
}

var (
	_ io.Reader = rxReader{}
	_ io.Writer = txWriter{}
)
