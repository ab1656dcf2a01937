package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
)

const (
	// evlWriteTimeout bounds how long the loop waits for one client to
	// take an answer (see rawFD).
	evlWriteTimeout = 60 * time.Second
	// evlEvents is how many events one epoll_wait takes.
	evlEvents = 256
)

// An evLoop is nginx's worker in miniature: one goroutine, one epoll set,
// every connection in it edge-triggered. It owns every descriptor it
// holds (a duplicate of the listener's included) and closes them in
// close. A page's first request fetches it on the loop, holding every
// connection meanwhile: a cost of the harness's warm-up, not of a hit.
type evLoop struct {
	ep, lfd, wake int
	conns         map[int]*evConn
	resp          responder
	events        []unix.EpollEvent
}

// An evConn is one client connection of the loop.
type evConn struct {
	fd   int
	sock *rawsock.Sock
	box  inbox
}

// serveEvl answers ln's connections on one epoll loop until ctx is done.
// It closes ln and every connection before it returns.
func serveEvl(ctx context.Context, ln net.Listener, pages *store) error {
	defer ln.Close()
	l, err := newEvLoop(ln, pages)
	if err != nil {
		return err
	}
	defer l.close()
	release := onStop(ctx, l.wakeUp)
	defer release()
	return l.run()
}

func newEvLoop(ln net.Listener, pages *store) (*evLoop, error) {
	l := &evLoop{
		ep: -1, lfd: -1, wake: -1,
		conns:  map[int]*evConn{},
		resp:   responder{pages: pages},
		events: make([]unix.EpollEvent, evlEvents),
	}
	if err := l.open(ln); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// open makes the loop's descriptors. The listener is level-triggered: a
// burst of connections larger than one accept round is reported again.
func (l *evLoop) open(ln net.Listener) error {
	var err error
	if l.lfd, err = dupListener(ln); err != nil {
		return err
	}
	if l.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		l.ep = -1
		return fmt.Errorf("epoll_create1: %w", err)
	}
	if l.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		l.wake = -1
		return fmt.Errorf("eventfd: %w", err)
	}
	if err := l.watch(l.lfd, unix.EPOLLIN); err != nil {
		return err
	}
	return l.watch(l.wake, unix.EPOLLIN)
}

// dupListener returns a duplicate of ln's descriptor for the loop to own.
// A duplicate rather than ln.File(): that *os.File's finalizer closes the
// descriptor once the file is unreachable, under the loop's feet.
func dupListener(ln net.Listener) (int, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("listener %T has no descriptor", ln)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("listener: %w", err)
	}
	fd, dupErr := -1, error(nil)
	err = rc.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) })
	if err = errors.Join(err, dupErr); err != nil {
		return -1, fmt.Errorf("dup listener: %w", err)
	}
	return fd, nil // non-blocking: the duplicate shares the flag Go set
}

func (l *evLoop) watch(fd int, events uint32) error {
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: int32(fd)}); err != nil {
		return fmt.Errorf("epoll_ctl add %d: %w", fd, err)
	}
	return nil
}

// run serves until wakeUp is called.
func (l *evLoop) run() error {
	for {
		n, err := unix.EpollWait(l.ep, l.events, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range l.events[:n] {
			switch fd := int(ev.Fd); fd {
			case l.wake:
				return nil
			case l.lfd:
				l.accept()
			default:
				if c := l.conns[fd]; c != nil {
					l.read(c)
				}
			}
		}
	}
}

// wakeUp makes run return; it may be called from another goroutine.
func (l *evLoop) wakeUp() {
	one := [8]byte{1} // the eventfd counter's increment, native (little) endian
	if _, err := unix.Write(l.wake, one[:]); err != nil {
		log.Printf("floor: wake the loop: %v", err)
	}
}

// accept takes every connection waiting.
func (l *evLoop) accept() {
	for {
		fd, _, err := unix.Accept4(l.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.ECONNABORTED):
			continue
		case errors.Is(err, unix.EAGAIN):
			return
		case err != nil:
			log.Printf("floor: accept: %v", err)
			return
		}
		if err := l.add(fd); err != nil {
			log.Printf("floor: %v", err)
			unix.Close(fd)
		}
	}
}

// add puts a new connection in the set and reads what it brought: a
// request sent with the connection is answered without a trip through
// epoll_wait.
func (l *evLoop) add(fd int) error {
	// Go's own connections have Nagle off; the loop's must too, or a
	// pipelined answer's tail waits for the client's ACK.
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fmt.Errorf("TCP_NODELAY: %w", err)
	}
	if err := l.watch(fd, unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLET); err != nil {
		return err
	}
	c := &evConn{fd: fd, sock: rawsock.Of(rawFD(fd)), box: newInbox()}
	l.conns[fd] = c
	l.read(c)
	return nil
}

// read reads and answers until a short read: edge-triggered, the socket
// is then drained, and bytes that come later bring a new event.
func (l *evLoop) read(c *evConn) {
	for {
		free := c.box.free()
		n, err := c.sock.ReadNow(free)
		switch {
		case err != nil:
			l.drop(c)
			return
		case n == 0:
			return // nothing there
		}
		if err := c.box.took(n, &l.resp, c.sock); err != nil {
			l.drop(c)
			return
		}
		if n < len(free) {
			return
		}
	}
}

// drop closes a connection (which takes it out of the epoll set).
func (l *evLoop) drop(c *evConn) {
	delete(l.conns, c.fd)
	unix.Close(c.fd)
}

// close closes every descriptor the loop holds.
func (l *evLoop) close() {
	for _, c := range l.conns {
		l.drop(c)
	}
	for _, fd := range [...]int{l.lfd, l.wake, l.ep} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// rawFD is a descriptor of the loop's as the syscall.RawConn that
// rawsock reads and writes through. The loop reads with ReadNow, which
// never waits. A write the socket cannot take waits in poll, holding the
// whole loop, for at most evlWriteTimeout: the bench's clients read all
// they asked for, and a queue of unsent answers per connection is not
// what the floor measures.
type rawFD int

func (fd rawFD) Control(f func(uintptr)) error {
	f(uintptr(fd))
	return nil
}

func (fd rawFD) Read(f func(uintptr) bool) error { return fd.until(f, unix.POLLIN) }

func (fd rawFD) Write(f func(uintptr) bool) error { return fd.until(f, unix.POLLOUT) }

// until calls f until it is done, waiting for events between calls.
func (fd rawFD) until(f func(uintptr) bool, events int16) error {
	for !f(uintptr(fd)) {
		if err := fd.wait(events); err != nil {
			return err
		}
	}
	return nil
}

func (fd rawFD) wait(events int16) error {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
	for {
		n, err := unix.Poll(pfd, int(evlWriteTimeout.Milliseconds()))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("poll: %w", err)
		case n == 0:
			return fmt.Errorf("poll: %w", os.ErrDeadlineExceeded)
		}
		return nil
	}
}
