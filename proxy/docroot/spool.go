package docroot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// spoolAhead bounds how far the worker's output may run ahead of the
// client in the temporary file (nginx's fastcgi_max_temp_file_size is
// 1 GiB); past it the worker waits for the client, as it did before.
const spoolAhead = 1 << 30

// spoolChunk is how much the client's side reads from the file at once.
const spoolChunk = 64 << 10

// outputSpool is a script's output past bufferedBody: its pump reads it
// from the worker into an unlinked temporary file as fast as the worker
// writes it, so the worker is free once the script ends however slowly
// the client reads (nginx's fastcgi_buffering with its temp file), while
// the client's body stream reads the file behind it as it grows: the
// response still streams, and a client that stops reading holds a file,
// not a worker.
type outputSpool struct {
	f    *os.File
	mu   sync.Mutex // guards the fields below
	cond sync.Cond  // signalled when written, ended or abandoned change
	// written is how much of the output is in the file; read how much
	// the client's side took.
	written, read int64
	ended         bool  // the pump is done: the output is complete or err says why not
	err           error // why the output ended early
	abandoned     bool  // the client's side is gone
	users         int   // pump and client's side; the file closes at 0
	done          func()
}

// startSpool starts the pump of out into a new temporary file; done runs
// once both the pump and the client's side (Close) have finished.
func startSpool(out Output, done func()) (*outputSpool, error) {
	f, err := tempFile("ramjet-php-output-*")
	if err != nil {
		return nil, fmt.Errorf("docroot: spool php output: %w", err)
	}
	s := &outputSpool{f: f, users: 2, done: done}
	s.cond.L = &s.mu
	go s.pump(out)
	return s, nil
}

// pump copies the output into the file until it ends, the client's side
// is gone (the rest is then drained by the pool) or spoolAhead is
// reached (then it waits for the client).
//
// Pieces that have arrived together (php-cgi's records are 4–8 KB) are
// gathered into one write of up to spoolChunk, and the client's side is
// woken once per write.
func (s *outputSpool) pump(out Output) {
	defer s.release()
	bp := chunkBufs.Get().(*[]byte)
	defer chunkBufs.Put(bp)
	acc := (*bp)[:0]
	for {
		b, err := out.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = s.publish(acc)
			}
			s.end(err)
			return
		}
		if len(acc)+len(b) <= cap(acc) {
			acc = append(acc, b...) // b is valid only until the next piece
			if out.Buffered() > 0 && len(acc) < cap(acc) {
				continue // more has arrived already
			}
			b = nil
		}
		err = s.publish(acc)
		if err == nil && len(b) > 0 {
			err = s.publish(b)
		}
		acc = acc[:0]
		if err != nil {
			_ = out.Close() // the client went away or the file failed: the pool drains the rest
			s.end(err)
			return
		}
	}
}

// errAbandoned: the client's side is gone; the output is not wanted.
var errAbandoned = errors.New("docroot: php output abandoned by its client")

// publish appends b to the file, within spoolAhead of the client, and
// wakes the client's side.
func (s *outputSpool) publish(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if !s.room(int64(len(b))) {
		return errAbandoned
	}
	if _, err := s.f.Write(b); err != nil {
		return fmt.Errorf("docroot: spool php output: %w", err)
	}
	s.mu.Lock()
	s.written += int64(len(b))
	s.cond.Broadcast()
	s.mu.Unlock()
	return nil
}

// room waits until n more bytes fit within spoolAhead of the client; it
// reports false once the client's side is gone.
func (s *outputSpool) room(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.abandoned && s.written+n-s.read > spoolAhead && s.written > s.read {
		s.cond.Wait()
	}
	return !s.abandoned
}

func (s *outputSpool) end(err error) {
	s.mu.Lock()
	s.ended, s.err = true, err
	s.cond.Broadcast()
	s.mu.Unlock()
}

// next reads the next piece of the output into buf, waiting for the pump;
// io.EOF once the output is complete.
func (s *outputSpool) next(buf []byte) (int, error) {
	s.mu.Lock()
	for s.read == s.written && !s.ended {
		s.cond.Wait()
	}
	off, avail, ended, err := s.read, s.written-s.read, s.ended, s.err
	s.mu.Unlock()
	if avail == 0 {
		if ended && err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	n, rerr := s.f.ReadAt(buf[:min(int64(len(buf)), avail)], off)
	if n == 0 && rerr != nil {
		return 0, fmt.Errorf("docroot: read spooled php output: %w", rerr)
	}
	s.mu.Lock()
	s.read += int64(n)
	s.cond.Broadcast() // the pump may wait for room
	s.mu.Unlock()
	return n, nil
}

// abandon ends the client's side: the pump stops at its next piece.
func (s *outputSpool) abandon() {
	s.mu.Lock()
	s.abandoned = true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.release()
}

// release ends one user's hold on the file; the last closes it.
func (s *outputSpool) release() {
	s.mu.Lock()
	s.users--
	last := s.users == 0
	s.mu.Unlock()
	if last {
		_ = s.f.Close() // unlinked: nothing to lose
		s.done()
	}
}
