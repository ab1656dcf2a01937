//go:build !race

package rawsock

import (
	"syscall"
	"unsafe"
)

func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(r), e
}

func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(r), e
}

// sysWritev writes a then b with one writev, its vector in iov.
func sysWritev(fd uintptr, iov *[2]syscall.Iovec, a, b []byte) (int, syscall.Errno) {
	iov[0].Base, iov[1].Base = &a[0], &b[0]
	iov[0].SetLen(len(a))
	iov[1].SetLen(len(b))
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), 2)
	iov[0].Base, iov[1].Base = nil, nil // the Sock must not keep the caller's buffers alive
	return int(r), e
}

const raceEnabled = false
