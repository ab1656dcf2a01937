//go:build race

package rawsock

import (
	"errors"
	"syscall"
	"unsafe"
)

// Under the race detector the calls go through package syscall, whose
// Read and Write tell the detector that what a goroutine did before a
// write happened before what another does after reading the answer (its
// ioSync). Raw calls skip that, and a test that checks state through a
// request and its response would see a race that real I/O orders.

func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), b)
	return n, errnoOf(err)
}

func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), b)
	return n, errnoOf(err)
}

// sysWritev writes only a under the race detector: package syscall has
// no writev that tells the detector of the I/O, and the caller's loop
// sends b after it.
func sysWritev(fd uintptr, _ *[2]syscall.Iovec, a, _ []byte) (int, syscall.Errno) {
	return sysWrite(fd, a)
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if err != nil && !errors.As(err, &e) {
		return syscall.EIO
	}
	return e
}

// raceEnabled: the race detector allocates on its own; allocation tests skip.
const raceEnabled = true

// sysSendMore is sendto with MSG_MORE; the sendfile after it tells the
// detector of the I/O.
func sysSendMore(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.Syscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		syscall.MSG_MORE|syscall.MSG_NOSIGNAL, 0, 0)
	return int(r), e
}

func sysSendfile(fd uintptr, in int, off *int64, n int64) (int, syscall.Errno) {
	r, err := syscall.Sendfile(int(fd), in, off, int(n))
	return r, errnoOf(err)
}

// sysSendfileCold is sysSendfile, an ordinary system call here already.
func sysSendfileCold(fd uintptr, in int, off *int64, n int64) (int, syscall.Errno) {
	return sysSendfile(fd, in, off, n)
}
