package docroot

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// spoolMax bounds the script output held between the worker and the
// client; the worker waits while the client is slower than that.
const spoolMax = 256 << 10

// spool carries a script's output from the FastCGI exchange to the
// response, like io.Pipe but buffered: the worker's STDOUT records are
// appended without waiting for each read, and the response takes all that
// has arrived at once. A fast script's output thus leaves in large chunks
// (fasthttp writes and flushes every chunk of an unknown-length body: with
// php-cgi's 4–8 KB records that was a write syscall per record), while a
// script that flushes and pauses still streams.
type spool struct {
	mu    sync.Mutex
	ready sync.Cond // signalled on every change
	buf   []byte
	off   int    // buf[off:] is unread
	free  []byte // the second buffer, while the reader does not hold it
	err   error  // the writer's end: io.EOF or why it failed
	gone  error  // the reader's end: why it stopped reading
	// users counts the sides still using the spool (reader, writer): the
	// last one to let go returns it to spools.
	users atomic.Int32
}

// spools are reused with their two buffers: a script's output otherwise
// cost a fresh, growing buffer per request (170 KB of garbage for
// phpinfo's 78 KB).
var spools = sync.Pool{New: func() any {
	s := &spool{}
	s.ready.L = &s.mu
	return s
}}

// pooledSpoolBuffer is the largest buffer a recycled spool keeps; a
// larger one (a big response streamed) is left to the collector.
const pooledSpoolBuffer = 2 * spoolMax

// newSpool returns a spool for one reader and one writer, who call
// readerDone and writerDone when they no longer touch it.
func newSpool() *spool {
	s := spools.Get().(*spool)
	s.users.Store(2)
	return s
}

// readerDone: the reader is finished, handing back spare, the last chunk
// it took (nil if none).
func (s *spool) readerDone(spare []byte) {
	s.mu.Lock()
	if s.free == nil {
		s.free = spare
	}
	s.mu.Unlock()
	s.let()
}

// writerDone: the writer is finished.
func (s *spool) writerDone() { s.let() }

// let is one side letting go; the last one puts the spool back, emptied.
func (s *spool) let() {
	if s.users.Add(-1) != 0 {
		return
	}
	s.buf, s.off, s.err, s.gone = keep(s.buf), 0, nil, nil
	s.free = keep(s.free)
	spools.Put(s)
}

func keep(b []byte) []byte {
	if cap(b) > pooledSpoolBuffer {
		return nil
	}
	return b[:0]
}

// Write appends p, waiting while spoolMax bytes are unread.
func (s *spool) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf)-s.off >= spoolMax && s.gone == nil {
		s.ready.Wait()
	}
	if s.gone != nil {
		return 0, s.gone
	}
	s.buf = append(s.buf, p...)
	s.ready.Broadcast()
	return len(p), nil
}

// closeWrite ends the output: err nil is a complete response (EOF). The
// first end counts.
func (s *spool) closeWrite(err error) {
	if err == nil {
		err = io.EOF
	}
	s.mu.Lock()
	if s.err == nil {
		s.err = err
		s.ready.Broadcast()
	}
	s.mu.Unlock()
}

// EndOutput is a complete response (phppool.OutputEnder): the reader sees
// EOF.
func (s *spool) EndOutput() { s.closeWrite(nil) }

// closeRead tells the writer nobody reads any more.
func (s *spool) closeRead(err error) {
	s.mu.Lock()
	s.gone = err
	s.ready.Broadcast()
	s.mu.Unlock()
}

// wait blocks until there is output, an end, or the reader left; mu held.
func (s *spool) wait() error {
	for len(s.buf) == s.off && s.err == nil && s.gone == nil {
		s.ready.Wait()
	}
	if len(s.buf) > s.off {
		return nil
	}
	if s.gone != nil {
		return s.gone
	}
	return s.err
}

// Read copies out what has arrived (for the CGI head and plain readers).
func (s *spool) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.wait(); err != nil {
		return 0, err
	}
	n := copy(p, s.buf[s.off:])
	s.off += n
	if s.off == len(s.buf) {
		s.buf, s.off = s.buf[:0], 0
	}
	s.ready.Broadcast()
	return n, nil
}

// appendTo appends everything that has arrived to resp's body and keeps
// the spool's buffer for the writer: one copy, as take's hand-over plus a
// copy into the response would be, but no buffer changes hands (a chunk
// starting past a head read through Read would come back shorter, and the
// next response regrow it).
func (s *spool) appendTo(resp *fasthttp.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.wait(); err != nil {
		return err
	}
	resp.AppendBody(s.buf[s.off:])
	s.buf, s.off = s.buf[:0], 0
	s.ready.Broadcast()
	return nil
}

// take hands over everything that has arrived and keeps spare (emptied)
// as the next buffer, so chunks move without copying. A nil spare is the
// first take: the spool's own second buffer takes the place.
func (s *spool) take(spare []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.wait(); err != nil {
		return nil, err
	}
	if spare == nil {
		spare, s.free = s.free, nil
	}
	out := s.buf[s.off:]
	s.buf, s.off = spare[:0], 0
	s.ready.Broadcast()
	return out, nil
}
