package disk

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A fetch reads a file whose size the index knows: one open, one read
// and one close, into a buffer the entries it decodes keep (RAM serves
// their bodies from it). The buffer has room for a little more than the
// index says, so a file another process sharing the directory rewrote
// larger is seen as such and read again whole rather than taken for a
// truncated one; a smaller one reads short and its checksum decides.

// slack is the room past the indexed size that tells a larger file.
const slack = 512

// nameLen is the length of a file name: 16 bytes of SHA-256, in hex.
const nameLen = 32

// nameInto writes the file name of key into dst.
func nameInto(dst *[nameLen]byte, key []byte) {
	sum := sha256.Sum256(key)
	hex.Encode(dst[:], sum[:nameLen/2])
}

// readIndexed reads the file name, expected to hold size bytes, and
// says into id which file it read (zero when it does not know).
func (t *Tier) readIndexed(name []byte, size int64, id *ident) ([]byte, error) {
	var path [pathRoom]byte
	p := cpath(&path, t.cfg.Path, name)
	fd, err := openNoAtime(&p[0])
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: string(p[:len(p)-1]), Err: err}
	}
	defer unix.Close(fd) //nolint:errcheck // read-only: nothing to lose
	if got, err := fstatID(fd); err == nil {
		*id = got
	}
	b := make([]byte, size+slack)
	n, err := readFull(fd, b, -1)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: string(p[:len(p)-1]), Err: err}
	}
	if n == len(b) { // larger than indexed: rewritten since
		*id = ident{}
		return readFileInto(string(p[:len(p)-1]), nil, nil)
	}
	return b[:n:n], nil
}

// openNoAtime opens the NUL-terminated path at p read-only, without
// updating its access time where the filesystem allows it (the files are
// ramjet's own: O_NOATIME is refused only on someone else's).
func openNoAtime(p *byte) (int, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOATIME
	cwd := unix.AT_FDCWD // the path is absolute or relative to the working directory, as os.Open's
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(p)), uintptr(flags), 0, 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
		case unix.EPERM:
			if flags&unix.O_NOATIME == 0 {
				return -1, errno
			}
			flags &^= unix.O_NOATIME
		default:
			return -1, errno
		}
	}
}

// readFull reads into b until it is full or the file ends: from off on
// (pread), or from where the file is when off is negative.
func readFull(fd int, b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		var m int
		var err error
		if off < 0 {
			m, err = unix.Read(fd, b[n:])
		} else {
			m, err = unix.Pread(fd, b[n:], off+int64(n))
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}
