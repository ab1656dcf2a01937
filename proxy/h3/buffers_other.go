//go:build !linux

package h3

// forceBuffers: only Linux lets a privileged process pass the cap.
func forceBuffers(fd, size int) {}
