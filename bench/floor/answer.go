package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

const (
	// maxRequest is the buffer a connection reads into: a request head
	// that does not fit is refused (431), as nginx refuses one over its
	// large_client_header_buffers.
	maxRequest = 4096
	// flushAt bounds what answers to pipelined requests gather before
	// they are written, so that a buffer full of requests for large pages
	// does not become megabytes of copies.
	flushAt = 64 << 10
)

// errRefused is a request answered with an error and Connection: close;
// its connection must be closed once the answer is written.
var errRefused = errors.New("request refused")

// An answerWriter sends a connection's answers (a *rawsock.Sock).
type answerWriter interface {
	Write(b []byte) (int, error)
	SendFile(head []byte, fd int, off, n int64, cold bool) (int64, error)
}

// A responder answers the requests of one connection at a time, gathering
// the answers to pipelined requests into one write.
type responder struct {
	pages *store
	out   []byte
}

// An inbox is a connection's bytes read and not yet answered.
type inbox struct {
	buf []byte
	n   int
}

func newInbox() inbox { return inbox{buf: make([]byte, maxRequest)} }

// free is where the next read goes; never empty after took returned nil.
func (b *inbox) free() []byte { return b.buf[b.n:] }

// took answers the requests that the n bytes just read into free
// complete, and keeps the rest for the next read. An error means the
// connection must be closed.
func (b *inbox) took(n int, r *responder, w answerWriter) error {
	b.n += n
	used, err := r.answer(b.buf[:b.n], w)
	b.n = copy(b.buf, b.buf[used:b.n])
	return err
}

// answer writes the answers to the complete requests at the start of in
// and returns the bytes they took; a request cut short stays for the next
// read. An error (errRefused after an error answer) means the connection
// must be closed.
func (r *responder) answer(in []byte, w answerWriter) (int, error) {
	used := 0
	for {
		target, n, status := nextRequest(in[used:])
		switch {
		case status != 0:
			r.out = append(r.out, emptyAnswer(status, true)...)
			if err := r.flush(w); err != nil {
				return used, err
			}
			return used, fmt.Errorf("%w: %d %s", errRefused, status, http.StatusText(status))
		case n == 0:
			return used, r.flush(w)
		}
		used += n
		if err := r.add(target, w); err != nil {
			return used, err
		}
	}
}

// nextRequest reads the head of the first request in in: its target and
// its length, 0 while the head is incomplete. A non-zero status is the
// error to answer instead.
func nextRequest(in []byte) (target []byte, n, status int) {
	end := bytes.Index(in, []byte("\r\n\r\n"))
	if end < 0 {
		if len(in) >= maxRequest {
			return nil, 0, http.StatusRequestHeaderFieldsTooLarge
		}
		return nil, 0, 0
	}
	line, _, _ := bytes.Cut(in[:end], []byte("\r\n"))
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	switch {
	case !ok1 || !ok2 || len(target) == 0 || target[0] != '/' || !bytes.HasPrefix(version, []byte("HTTP/1.")):
		return nil, 0, http.StatusBadRequest
	case string(method) != http.MethodGet:
		// a body would follow, and the floor does not read bodies
		return nil, 0, http.StatusMethodNotAllowed
	}
	return target, end + 4, 0
}

// add answers one request: into the gathered answers, or, for a page
// sent from its file, with them ahead of its head.
func (r *responder) add(target []byte, w answerWriter) error {
	p, err := r.pages.get(target)
	switch {
	case err != nil:
		r.out = append(r.out, emptyAnswer(http.StatusBadGateway, false)...)
	case p.file != nil:
		return r.sendFile(p, w)
	default:
		r.out = append(r.out, p.wire...)
	}
	if len(r.out) >= flushAt {
		return r.flush(w)
	}
	return nil
}

// sendFile writes the gathered answers and p's head with MSG_MORE, so
// that they wait in the socket for the body, then p's body with sendfile.
func (r *responder) sendFile(p *page, w answerWriter) error {
	r.out = append(r.out, p.head...)
	n := int64(len(p.body))
	sent, err := w.SendFile(r.out, p.fd, 0, n, false)
	r.out = r.out[:0]
	switch {
	case err != nil:
		return fmt.Errorf("sendfile: %w", err)
	case sent < n:
		return fmt.Errorf("sendfile: %d of %d bytes: %w", sent, n, io.ErrUnexpectedEOF)
	}
	return nil
}

// flush writes the gathered answers.
func (r *responder) flush(w answerWriter) error {
	if len(r.out) == 0 {
		return nil
	}
	_, err := w.Write(r.out)
	r.out = r.out[:0]
	if err != nil {
		return fmt.Errorf("write answers: %w", err)
	}
	return nil
}

// emptyAnswer is an answer without a body; errors are rare enough to
// build it each time.
func emptyAnswer(status int, closeConn bool) string {
	a := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\nServer: ramjet\r\nContent-Length: 0\r\n"
	if closeConn {
		a += "Connection: close\r\n"
	}
	return a + "\r\n"
}
