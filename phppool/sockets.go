package phppool

import (
	"fmt"
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
// The directory is mode 0700 and belongs to the workers' user, so only
// they and ramjet (root) can reach a worker.
type sockets struct {
	dir string
	n   atomic.Uint64
}

func newSockets(cred *syscall.Credential) (*sockets, error) {
	dir, err := os.MkdirTemp("", "ramjet-php-")
	if err != nil {
		return nil, fmt.Errorf("phppool: socket directory: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("phppool: socket directory: %w", err)
		}
	}
	return &sockets{dir: dir}, nil
}

// next names a fresh socket: never reused, so a dead worker's leftover
// file never stands in a new worker's way.
func (s *sockets) next() string {
	return filepath.Join(s.dir, "w"+strconv.FormatUint(s.n.Add(1), 10)+".sock")
}

// remove deletes the directory once no worker runs.
func (s *sockets) remove() error {
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("phppool: remove socket directory: %w", err)
	}
	return nil
}
