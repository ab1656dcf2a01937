package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
	"github.com/valyala/fasthttp"
)

// ownState is what serving a connection's requests needs: fasthttp's
// request context, which the handler fills as under fasthttp's Server,
// and the buffers the request is read from and its answer written to.
type ownState struct {
	in   [maxRequest]byte
	have int
	src  bytes.Reader
	br   *bufio.Reader
	out  bytes.Buffer
	bw   *bufio.Writer
	ctx  fasthttp.RequestCtx
}

func newOwnState() *ownState {
	s := &ownState{}
	s.br = bufio.NewReaderSize(&s.src, maxRequest)
	s.bw = bufio.NewWriterSize(&s.out, maxRequest)
	return s
}

var ownStates = sync.Pool{New: func() any { return newOwnState() }}

// ownConn is one connection of the own loop. pooled takes its state
// from ownStates only once the socket is readable and gives it back when
// its requests are answered, so that a waiting connection holds none and
// the next one served gets state still in the CPU's cache; otherwise the
// connection keeps its own for its whole life, as fasthttp's Server
// keeps a request context per connection.
type ownConn struct {
	c      net.Conn
	rc     syscall.RawConn
	sock   *rawsock.Sock
	h      *fhHandler
	pooled bool
	st     *ownState
	errno  syscall.Errno
	eof    bool
	readFn func(fd uintptr) bool
}

// serveOwn answers each connection on a goroutine of its own, as gor
// does, with fasthttp's request parser, context and response writer
// around the fh handler: what a loop of ramjet's own around fasthttp's
// types would cost, with its state pooled per request (FLOOR_MODE=own)
// or kept per connection (ownheld).
func serveOwn(pooled bool) serveFunc {
	return func(ctx context.Context, ln net.Listener, pages *store) error {
		h := newFhHandler(pages)
		return serveEach(ctx, ln, func(c net.Conn) { serveOwnConn(c, h, pooled) })
	}
}

func serveOwnConn(c net.Conn, h *fhHandler, pooled bool) {
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	oc := &ownConn{c: c, rc: rc, sock: rawsock.Of(rc), h: h, pooled: pooled}
	oc.readFn = oc.read
	if !pooled {
		oc.st = newOwnState()
	}
	for {
		if err := rc.Read(oc.readFn); err != nil || oc.errno != 0 || oc.eof {
			return
		}
		if oc.answer() != nil {
			return
		}
	}
}

// read is the wait's callback: it reads into the state, taking one from
// the pool first when the connection has none.
func (oc *ownConn) read(fd uintptr) bool {
	if oc.st == nil {
		oc.st = ownStates.Get().(*ownState)
	}
	st := oc.st
	n, err := syscall.Read(int(fd), st.in[st.have:])
	switch {
	case err == syscall.EAGAIN:
		oc.giveBack()
		return false
	case err == syscall.EINTR:
		return oc.read(fd)
	case err != nil:
		oc.errno = err.(syscall.Errno)
	case n == 0:
		oc.eof = true
	}
	st.have += max(n, 0)
	return true
}

// giveBack returns the state to the pool when pooled and holding no
// bytes of a request.
func (oc *ownConn) giveBack() {
	if oc.pooled && oc.st != nil && oc.st.have == 0 {
		ownStates.Put(oc.st)
		oc.st = nil
	}
}

// answer answers the complete requests read and keeps a partial one for
// the next read; an error means the connection must be closed.
func (oc *ownConn) answer() error {
	st := oc.st
	used := 0
	for {
		end := bytes.Index(st.in[used:st.have], []byte("\r\n\r\n"))
		if end < 0 {
			break
		}
		head := st.in[used : used+end+4]
		used += end + 4
		st.src.Reset(head)
		st.br.Reset(&st.src)
		if err := st.ctx.Request.Header.Read(st.br); err != nil {
			return oc.refuse(http.StatusBadRequest)
		}
		st.ctx.Init2(oc.c, nil, false)
		oc.h.serve(&st.ctx)
		err := st.ctx.Response.Write(st.bw)
		st.ctx.Request.Reset()
		st.ctx.Response.Reset()
		if err != nil {
			return err
		}
	}
	if used == 0 && st.have == len(st.in) {
		return oc.refuse(http.StatusRequestHeaderFieldsTooLarge)
	}
	st.have = copy(st.in[:], st.in[used:st.have])
	if err := oc.flush(); err != nil {
		return err
	}
	oc.giveBack()
	return nil
}

func (oc *ownConn) flush() error {
	st := oc.st
	if err := st.bw.Flush(); err != nil {
		return err
	}
	if st.out.Len() == 0 {
		return nil
	}
	_, err := oc.sock.Write(st.out.Bytes())
	st.out.Reset()
	return err
}

// refuse writes the answers so far and an error answer, and asks for the
// connection to be closed.
func (oc *ownConn) refuse(status int) error {
	if err := oc.flush(); err != nil {
		return err
	}
	if _, err := oc.sock.Write([]byte(emptyAnswer(status, true))); err != nil {
		return err
	}
	return fmt.Errorf("%w: %d", errRefused, status)
}
