//go:build !linux

package h2

import "syscall"

// waitReadable does not wait where a socket cannot be peeked at: the
// read after it waits instead.
func waitReadable(syscall.RawConn) error { return nil }
