package h3

import "syscall"

// forceBuffers sets fd's buffers past net.core.rmem_max / wmem_max, which
// only a process with CAP_NET_ADMIN may; for others it does nothing.
func forceBuffers(fd, size int) {
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, size) // checked by the caller
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_SNDBUFFORCE, size) // checked by the caller
}
