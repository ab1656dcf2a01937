package testbed

import (
	"fmt"
	"os"
	"strings"
)

// SocketCount is how many sockets process pid holds open (listening ones
// included). php-cgi holds two while a connection it accepted is open and
// one once it has dropped it.
func SocketCount(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("testbed: sockets of %d: %w", pid, err)
	}
	n := 0
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd.Name())
		if err == nil && strings.HasPrefix(link, "socket:[") {
			n++
		} // an error: closed meanwhile
	}
	return n, nil
}
