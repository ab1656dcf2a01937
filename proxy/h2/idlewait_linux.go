package h2

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waitReadable returns once rc's socket has bytes, end of file or an
// error to read, or its read deadline passed. It parks in Go's netpoller
// a few frames deep.
func waitReadable(rc syscall.RawConn) error {
	return rc.Read(readable)
}

// socketReady reports whether c's socket has bytes, end of file or an
// error to read now: then the read does not wait, and no read with a past
// deadline (whose error allocates) is needed to look for bytes a wrapper
// holds.
func (c *conn) socketReady() bool {
	if c.peek == nil {
		c.peek = func(fd uintptr) { c.ready = readable(fd) } // made once: Control's argument escapes
	}
	c.ready = false
	if err := c.sock.Control(c.peek); err != nil {
		return true // the read reports it
	}
	return c.ready
}

// readable is rc.Read's test: a recv with MSG_PEEK|MSG_DONTWAIT, which
// takes nothing. A raw system call: it returns at once.
func readable(fd uintptr) bool {
	var b [1]byte
	_, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	return errno != unix.EAGAIN // EINTR too: the read after it tells
}
