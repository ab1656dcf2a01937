//go:build !race

package rawsock

import (
	"syscall"
	"unsafe"
)

// sysRead and sysWrite are recvfrom and sendto, not read and write: on
// a socket they go to it straight from the descriptor, without the file
// layer read and write pass through (fdget_pos, vfs_read, the iterator
// set-up), whose memory under 1,000 busy connections is as cold as the
// socket's.
func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
	return int(r), e
}

func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		syscall.MSG_NOSIGNAL, 0, 0)
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

// sysSendMore writes b with MSG_MORE: the bytes wait in the socket for
// what the next call sends (sendto; MSG_NOSIGNAL as Go's own writes
// never raise SIGPIPE).
func sysSendMore(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		syscall.MSG_MORE|syscall.MSG_NOSIGNAL, 0, 0)
	return int(r), e
}

// sysSendfile sends n bytes of the file in from *off, advancing *off.
func sysSendfile(fd uintptr, in int, off *int64, n int64) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDFILE, fd, uintptr(in), uintptr(unsafe.Pointer(off)), uintptr(n), 0, 0)
	return int(r), e
}

// sysSendfileCold is sysSendfile as an ordinary system call, for a file
// whose pages may have to be read from the disk: the scheduler then sees
// the thread blocked and hands its P to another (sendfile.go).
func sysSendfileCold(fd uintptr, in int, off *int64, n int64) (int, syscall.Errno) {
	r, _, e := syscall.Syscall6(syscall.SYS_SENDFILE, fd, uintptr(in), uintptr(unsafe.Pointer(off)), uintptr(n), 0, 0)
	return int(r), e
}
