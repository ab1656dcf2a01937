//go:build !linux

package h2

import "syscall"

// Where a socket cannot be peeked at, an idle connection waits in its
// read: socketReady sends readFirst straight to it.

func (c *conn) socketReady() bool { return true }

func waitReadable(syscall.RawConn) error { return nil }
