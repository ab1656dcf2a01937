package phppool

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pidfd is a handle on a process that is not ramjet's child: a worker
// forked by a php-cgi master. Its parent reaps it, so its pid may be
// reused by another process at any moment; signals sent through the pidfd
// reach this process or fail, never another one. The pidfd becomes
// readable when the process exits, which wait learns from Go's netpoller,
// holding no thread.
type pidfd struct {
	f *os.File // non-blocking, so os.NewFile puts it in the netpoller
}

func openPidfd(pid int) (*pidfd, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("phppool: pidfd of %d: %w", pid, err)
	}
	return &pidfd{f: os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(pid))}, nil
}

// signal sends sig; it fails once the process has exited.
func (p *pidfd) signal(sig syscall.Signal) error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.PidfdSendSignal(int(fd), sig, nil, 0) }); err != nil {
		return err
	}
	return serr
}

// exited reports at once whether the process has exited.
func (p *pidfd) exited() bool {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return true
	}
	gone := true
	_ = rc.Control(func(fd uintptr) { gone = pollExited(fd) }) // fails only when closed: gone
	return gone
}

// wait blocks until the process has exited or the pidfd is closed.
func (p *pidfd) wait() error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Read(pollExited)
}

// waitFor is wait bounded by d; it reports whether the process exited.
func (p *pidfd) waitFor(d time.Duration) bool {
	if err := p.f.SetReadDeadline(time.Now().Add(d)); err != nil {
		return p.exited()
	}
	return p.wait() == nil
}

func (p *pidfd) close() error { return p.f.Close() }

// pollExited reports whether the pidfd fd is readable: its process exited.
func pollExited(fd uintptr) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}
