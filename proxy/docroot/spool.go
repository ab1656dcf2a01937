package docroot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// spoolAhead bounds how far the worker's output may run ahead of the
// client (nginx's fastcgi_max_temp_file_size is 1 GiB); past it the
// worker waits for the client, as it did before.
const spoolAhead = 1 << 30

// spoolChunk is the unit of the spool: the pump gathers pieces that
// arrived together into chunks this large, and the client's side reads
// at most this much at once.
const spoolChunk = 64 << 10

// spoolMemory is how much output waits for the client in memory; past it
// the rest goes to the temporary file until the client has caught up.
const spoolMemory = 4 * spoolChunk

var chunkBufs = sync.Pool{New: func() any { b := make([]byte, 0, spoolChunk); return &b }}

// newChunk is an empty chunk from chunkBufs.
func newChunk() *[]byte {
	c := chunkBufs.Get().(*[]byte)
	*c = (*c)[:0]
	return c
}

// outputSpool is a script's output past bufferedBody, between the worker
// and the client (nginx's fastcgi_buffering): its pump reads the output
// as fast as the worker writes it, so the worker is free once the script
// ends however slowly the client reads, while the client's body stream
// takes it behind the pump — the response still streams. What the client
// has not taken waits in memory up to spoolMemory, beyond that in an
// unlinked temporary file, so a client that stops reading holds a file,
// not a worker, and one that keeps up costs no file I/O. Everything in
// memory comes before everything unread in the file.
type outputSpool struct {
	mu   sync.Mutex // guards the fields below
	cond sync.Cond  // signalled when data, room, the end or the client's absence change

	mem    []*[]byte // chunks in memory, oldest first (chunkBufs)
	memOff int       // how much of mem[0] the client took
	memLen int       // bytes in mem not taken

	f            *os.File // the overflow, created when first needed
	fileW, fileR int64    // written to f; taken from it
	ended        bool     // the pump is done: the output is complete or err says why not
	err          error    // why the output ended early
	abandoned    bool     // the client's side is gone
	users        int      // pump and client's side; resources go at 0
	done         func()
	reading      bool // a file read is in progress (outside mu): the file may not start over
}

// startSpool starts the pump of out; done runs once both the pump and
// the client's side (abandon) have finished.
func startSpool(out Output, done func()) *outputSpool {
	s := &outputSpool{users: 2, done: done}
	s.cond.L = &s.mu
	go s.pump(out)
	return s
}

// pump copies the output into the spool until it ends or the client's
// side is gone (the pool then drains the rest). Pieces that have arrived
// together (php-cgi's records are 4–8 KB) go in as one chunk.
func (s *outputSpool) pump(out Output) {
	defer s.release()
	acc := newChunk()
	for {
		b, err := out.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = s.publish(acc)
			} else {
				chunkBufs.Put(acc)
			}
			s.end(err)
			return
		}
		for len(b) > 0 { // b is valid only until the next piece
			k := min(len(b), cap(*acc)-len(*acc))
			*acc = append(*acc, b[:k]...)
			b = b[k:]
			if len(*acc) < cap(*acc) && (len(b) > 0 || out.Buffered() > 0) {
				continue // more has arrived already
			}
			if err := s.publish(acc); err != nil {
				_ = out.Close() // the client went away or the file failed: the pool drains the rest
				s.end(err)
				return
			}
			acc = newChunk()
		}
	}
}

// errAbandoned: the client's side is gone; the output is not wanted.
var errAbandoned = errors.New("docroot: php output abandoned by its client")

// publish hands the chunk to the client's side: in memory while the file
// holds nothing unread and memory has room, else appended to the file.
// It waits while the client is spoolAhead behind.
func (s *outputSpool) publish(chunk *[]byte) error {
	n := len(*chunk)
	if n == 0 {
		chunkBufs.Put(chunk)
		return nil
	}
	s.mu.Lock()
	for !s.abandoned && s.memLen+int(s.fileW-s.fileR)+n > spoolAhead {
		s.cond.Wait()
	}
	if s.abandoned {
		s.mu.Unlock()
		chunkBufs.Put(chunk)
		return errAbandoned
	}
	if s.fileW == s.fileR && s.memLen+n <= spoolMemory {
		s.mem = append(s.mem, chunk)
		s.memLen += n
		s.cond.Broadcast()
		s.mu.Unlock()
		return nil
	}
	if s.fileW == s.fileR && !s.reading && s.fileW > 0 {
		s.fileW, s.fileR = 0, 0 // all taken: the file starts over
	}
	at := s.fileW
	s.mu.Unlock()
	err := s.write(*chunk, at)
	chunkBufs.Put(chunk)
	s.mu.Lock()
	if err == nil {
		s.fileW += int64(n)
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	return err
}

// write puts b at offset at of the file, creating it first if need be.
// Only the pump calls it; the client's side reads below at meanwhile.
func (s *outputSpool) write(b []byte, at int64) error {
	if s.f == nil {
		f, err := tempFile("ramjet-php-output-*")
		if err != nil {
			return fmt.Errorf("docroot: spool php output: %w", err)
		}
		s.mu.Lock()
		s.f = f
		s.mu.Unlock()
	}
	if _, err := s.f.WriteAt(b, at); err != nil {
		return fmt.Errorf("docroot: spool php output: %w", err)
	}
	return nil
}

func (s *outputSpool) end(err error) {
	s.mu.Lock()
	s.ended, s.err = true, err
	s.cond.Broadcast()
	s.mu.Unlock()
}

// writeNext writes the next piece of the output to w, waiting for the
// pump: a chunk in memory as it is (buf unused), one from the file
// through buf; io.EOF once the output is complete.
func (s *outputSpool) writeNext(w io.Writer, buf []byte) (int, error) {
	s.mu.Lock()
	for s.memLen == 0 && s.fileR == s.fileW && !s.ended {
		s.cond.Wait()
	}
	if s.memLen > 0 && s.memOff == 0 {
		c := s.mem[0]
		s.mem[0] = nil
		s.mem = s.mem[1:]
		s.memLen -= len(*c)
		s.cond.Broadcast() // the pump may wait for room
		s.mu.Unlock()
		n, err := w.Write(*c)
		chunkBufs.Put(c)
		return n, err
	}
	s.mu.Unlock()
	n, err := s.next(buf)
	if err != nil {
		return 0, err
	}
	return w.Write(buf[:n])
}

// next copies the next piece of the output into buf, waiting for the
// pump; io.EOF once the output is complete.
func (s *outputSpool) next(buf []byte) (int, error) {
	s.mu.Lock()
	for s.memLen == 0 && s.fileR == s.fileW && !s.ended {
		s.cond.Wait()
	}
	if s.memLen > 0 {
		c := *s.mem[0]
		n := copy(buf, c[s.memOff:])
		s.memOff += n
		s.memLen -= n
		if s.memOff == len(c) {
			chunkBufs.Put(s.mem[0])
			s.mem[0] = nil
			s.mem, s.memOff = s.mem[1:], 0
		}
		s.cond.Broadcast() // the pump may wait for room
		s.mu.Unlock()
		return n, nil
	}
	if s.fileR == s.fileW {
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	f, off, avail := s.f, s.fileR, s.fileW-s.fileR
	s.reading = true
	s.mu.Unlock()
	n, rerr := f.ReadAt(buf[:min(int64(len(buf)), avail)], off)
	s.mu.Lock()
	s.reading = false
	s.fileR += int64(n)
	s.cond.Broadcast()
	s.mu.Unlock()
	if n == 0 && rerr != nil {
		return 0, fmt.Errorf("docroot: read spooled php output: %w", rerr)
	}
	return n, nil
}

// abandon ends the client's side: the pump stops at its next chunk.
func (s *outputSpool) abandon() {
	s.mu.Lock()
	s.abandoned = true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.release()
}

// release ends one user's hold; the last frees the memory and the file.
func (s *outputSpool) release() {
	s.mu.Lock()
	s.users--
	last := s.users == 0
	mem, f := s.mem, s.f
	if last {
		s.mem, s.memLen, s.f = nil, 0, nil
	}
	s.mu.Unlock()
	if !last {
		return
	}
	for _, c := range mem {
		chunkBufs.Put(c)
	}
	if f != nil {
		_ = f.Close() // unlinked: nothing to lose
	}
	s.done()
}
