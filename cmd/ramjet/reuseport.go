package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// shared reports whether a listening socket has SO_REUSEPORT: one
// `ramjet adopt` bound beside the web server, which takes the new
// connections once this process stops accepting. A stop then first
// stops accepting and finishes what it accepted (as an upgrade's old
// process does) instead of closing connections whose request it has
// not read yet.
func (s *sockets) shared() bool {
	for _, k := range s.open {
		if k.ln == nil {
			continue
		}
		rc, err := k.ln.SyscallConn()
		if err != nil {
			continue
		}
		on := 0
		_ = rc.Control(func(fd uintptr) { // a socket whose option cannot be read is not shared
			on, _ = unix.GetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT)
		})
		if on != 0 {
			return true
		}
	}
	return false
}
