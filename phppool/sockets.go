package phppool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
)

// sockets is the private directory holding a pool's worker sockets.
// Workers listen on Unix sockets, not loopback TCP: php-cgi writes a
// response in several small writes, and over TCP Nagle on its side plus
// delayed ACKs on ours stalled responses of 16 KB and more by ~40 ms.
// The directory belongs to the workers' user, which creates the sockets,
// and to ramjet's group, mode 0710: ramjet (root or not) may reach a
// socket in it, and nobody else may reach a worker, nor list the sockets.
type sockets struct {
	dir    string
	handed bool // chowned to the workers' user
	n      atomic.Uint64
}

func newSockets(cred *syscall.Credential, withTmp bool) (*sockets, error) {
	dir, err := os.MkdirTemp("", "ramjet-php-")
	if err != nil {
		return nil, fmt.Errorf("phppool: socket directory: %w", err)
	}
	if withTmp {
		if err := makeTmp(filepath.Join(dir, "tmp"), cred); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if cred != nil {
		// chmod first: once the workers' user owns it, only CAP_FOWNER could.
		err := os.Chmod(dir, 0o710)
		if err == nil {
			err = os.Chown(dir, int(cred.Uid), os.Getegid())
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("phppool: socket directory: %w", err)
		}
	}
	return &sockets{dir: dir, handed: cred != nil}, nil
}

// makeTmp makes a confined pool's private temporary directory, the
// workers' own (mode 0700).
func makeTmp(dir string, cred *syscall.Credential) error {
	err := os.Mkdir(dir, 0o700)
	if err == nil && cred != nil {
		err = os.Chown(dir, int(cred.Uid), int(cred.Gid))
	}
	if err != nil {
		return fmt.Errorf("phppool: temporary directory: %w", err)
	}
	return nil
}

// next names a fresh socket: never reused, so a dead worker's leftover
// file never stands in a new worker's way.
func (s *sockets) next() string {
	return filepath.Join(s.dir, "w"+strconv.FormatUint(s.n.Add(1), 10)+".sock")
}

// remove deletes the directory once no worker runs.
func (s *sockets) remove() error {
	if s.handed {
		// Taken back first: a non-root ramjet may not delete the sockets
		// in a directory of the workers' user, nor their temporary files.
		if err := os.Chown(s.dir, os.Geteuid(), os.Getegid()); err != nil {
			return fmt.Errorf("phppool: remove socket directory: %w", err)
		}
		if err := os.Chown(s.tmpDir(), os.Geteuid(), os.Getegid()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("phppool: remove temporary directory: %w", err)
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("phppool: remove socket directory: %w", err)
	}
	return nil
}
