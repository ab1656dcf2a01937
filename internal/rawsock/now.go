package rawsock

import (
	"fmt"
	"io"
	"syscall"
)

// ReadNow reads what the socket holds now, without waiting and whatever
// its read deadline says: 0 and no error when nothing is there yet; end
// of file as io.EOF. A read whose deadline fired while the scheduler had
// not yet looked at the socket's readiness (a busy core runs expired
// timers before it polls the network) finds the bytes here.
func (s *Sock) ReadNow(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	s.rb, s.rn, s.rerrno = b, 0, syscall.EAGAIN
	err := s.rc.Control(s.nowFn)
	n, errno := s.rn, s.rerrno
	s.rb = nil
	switch {
	case err != nil:
		return 0, err // closed
	case errno == syscall.EAGAIN:
		return 0, nil
	case errno != 0:
		return 0, fmt.Errorf("read: %w", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readNow is ReadNow's callback: read's, which leaves rn and rerrno as
// they were (EAGAIN) when the socket has nothing.
func (s *Sock) readNow(fd uintptr) { s.read(fd) }
