package rawsock

import (
	"fmt"
	"io"
	"sync"
	"syscall"
)

// ReadPooledNow reads what the socket holds now into a buffer taken
// from pool (a *[]byte) only once there are bytes, and returns it with
// the n bytes read: nil, 0 and no error when the socket has nothing now
// (ReadNow's rules); nil and an error otherwise (end of file as io.EOF).
func (s *Sock) ReadPooledNow(pool *sync.Pool) (*[]byte, int, error) {
	s.pool, s.pbuf, s.rn, s.rerrno = pool, nil, 0, syscall.EAGAIN
	return s.pooledResult(s.rc.Control(s.nowFn))
}

// ReadPooledEach waits until the socket is readable and only then takes
// a buffer from pool (a *[]byte) to read into: a connection waiting for
// its next request holds none, and the one it reads into is the one the
// last request gave back, still in the CPU's cache. Each time bytes come
// it hands them to each (the buffer is each's from then), and while each
// reports true it waits for the next bytes without reading first, on
// the same wait. A wait per arrival would make a read that finds
// nothing before each wait (Go's netpoller forgets a readiness it
// saw before the wait began, so every wait must start with a read): one
// system call per request that nginx, which knows its last read emptied
// the socket, does not make. Within one wait the netpoller's readiness
// is kept, and a wake-up means bytes came. each runs on the reading
// goroutine, inside the wait: it may write to the socket and move its
// deadlines, not read from it nor close it (a Close waits for the read
// to end). It returns nil when each reported false;
// otherwise why the wait ended (a deadline or Close as Read's, end of
// file as io.EOF).
func (s *Sock) ReadPooledEach(pool *sync.Pool, each func(b *[]byte, n int) bool) error {
	s.pool, s.each, s.pbuf, s.rn, s.rerrno = pool, each, nil, 0, 0
	err := s.rc.Read(s.readFn)                         // read calls readPooled while s.pool is set
	stopped := err == nil && s.pbuf == nil && s.rn > 0 // each had the last bytes and stopped
	s.each = nil
	if _, _, err = s.pooledResult(err); stopped {
		return nil
	}
	return err
}

func (s *Sock) pooledResult(err error) (*[]byte, int, error) {
	// s reads into callers' buffers again from here (read), whatever came.
	b, n, errno, pool := s.pbuf, s.rn, s.rerrno, s.pool
	s.pool, s.pbuf, s.rb, s.rerrno = nil, nil, nil, 0
	if n > 0 && err == nil && errno == 0 {
		return b, n, nil
	}
	if b != nil {
		pool.Put(b)
	}
	switch {
	case err != nil:
		return nil, 0, err
	case errno == syscall.EAGAIN: // ReadPooledNow: nothing now
		return nil, 0, nil
	case errno != 0:
		return nil, 0, fmt.Errorf("read: %w", errno)
	}
	return nil, 0, io.EOF
}

// readPooled is read's while ReadPooledEach or ReadPooledNow reads: the buffer goes back to
// the pool when the socket has nothing yet. The callbacks are read's so
// that a Sock, one per served connection, carries no more of them.
func (s *Sock) readPooled(fd uintptr) bool {
	if s.pbuf == nil {
		s.pbuf = s.pool.Get().(*[]byte)
	}
	s.rb = *s.pbuf
	if s.readInto(fd) {
		if s.each == nil || s.rn <= 0 || s.rerrno != 0 {
			return true
		}
		b := s.pbuf
		s.pbuf, s.rb = nil, nil
		return !s.each(b, s.rn) // true from each: wait for the next bytes
	}
	s.pool.Put(s.pbuf)
	s.pbuf = nil
	return false
}
