package rawsock

import "fmt"

// A response's body can be sent from a file the kernel already holds in
// its page cache, as nginx sends its cache files: the head written with
// MSG_MORE, so that it waits in the socket for the body, then the body
// with sendfile, both leaving in one segment. The same write loop as
// Write's makes the calls, raw as Write's are (see doc.go): a sendfile
// made as an ordinary system call kept the scheduler's monitor waking
// every 20 µs beside the server on its one core, a tenth of a 30 KB
// hit's CPU. A raw sendfile whose pages are not in the page cache waits
// for the disk holding its thread and the scheduler's P with it (with
// GOMAXPROCS 1 or 2, the whole server), as nginx's worker without aio
// does: a file that may be cold (cold) is sent with an ordinary system
// call instead, which the scheduler sees, so that it hands the P to
// another thread while the kernel reads the pages. The caller tells
// which (proxy/cache's Section: a file not sent lately).

// fileSpan is what a SendFile has still to send from its file.
type fileSpan struct {
	fd        int
	off, left int64
	cold      bool // its pages may have to be read from the disk
}

// maxSendfile bounds one sendfile's count (Linux sends at most ~2 GiB).
const maxSendfile = 1 << 30

// SendFile writes head and then n bytes of the file fd from off, with
// sendfile from that offset (the descriptor's own is left alone: other
// answers may be sending from it), waiting while the socket is not
// writable. It reports the file's bytes sent: fewer than n, without an
// error, when the file ends early (truncated underneath). cold: the
// file's pages may not be in the page cache, and the sendfile is an
// ordinary system call.
func (s *Sock) SendFile(head []byte, fd int, off, n int64, cold bool) (int64, error) {
	if n <= 0 {
		_, err := s.Write(head)
		return 0, err
	}
	s.wb, s.wb2, s.wdone, s.werrno = head, nil, 0, 0
	s.file = fileSpan{fd: fd, off: off, left: n, cold: cold}
	err := s.rc.Write(s.writeFn)
	sent, errno := n-s.file.left, s.werrno
	s.wb, s.file = nil, fileSpan{}
	switch {
	case err != nil:
		return sent, err // deadline or closed, wrapped by net
	case errno != 0:
		return sent, fmt.Errorf("sendfile: %w", errno)
	}
	return sent, nil
}
