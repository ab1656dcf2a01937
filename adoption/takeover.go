package adoption

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Lender is a web server that hands its own listening sockets over
// (Apache, whose graceful restart cannot give an open listener
// SO_REUSEPORT): ramjet then accepts on the very socket the web server
// accepted on, and nothing queued on it is lost when the web server
// lets go of it.
type Lender interface {
	Lend(ctx context.Context, addrs []string) ([]*os.File, error)
}

// TakeListeners duplicates into this process the sockets process pid
// listens on at addrs (pidfd_getfd, Linux 5.6; root), and sets
// SO_REUSEPORT on them so that the web server can bind the address
// again beside ramjet on a rollback.
func TakeListeners(pid int, addrs []string) ([]*os.File, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("adoption: the web server's process %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	var out []*os.File
	for _, a := range addrs {
		fd, err := listeningFD(pid, a)
		if err != nil {
			return nil, closeAll(out, err)
		}
		nfd, err := unix.PidfdGetfd(pidfd, fd, 0)
		if err != nil {
			return nil, closeAll(out, fmt.Errorf("adoption: take %s from process %d: %w", a, pid, err))
		}
		if err := unix.SetsockoptInt(nfd, syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			unix.Close(nfd)
			return nil, closeAll(out, fmt.Errorf("adoption: %s: SO_REUSEPORT: %w", a, err))
		}
		out = append(out, os.NewFile(uintptr(nfd), "tcp:"+a))
	}
	return out, nil
}

func closeAll(fs []*os.File, err error) error {
	for _, f := range fs {
		_ = f.Close() // err says why
	}
	return err
}

// listeningFD finds the descriptor of process pid's socket listening on
// addr.
func listeningFD(pid int, addr string) (int, error) {
	inodes, err := listeningInodes(addr)
	if err != nil {
		return 0, err
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("adoption: %w", err)
	}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		ino, ok := strings.CutPrefix(link, "socket:[")
		if ok && inodes[strings.TrimSuffix(ino, "]")] {
			return strconv.Atoi(e.Name())
		}
	}
	return 0, fmt.Errorf("adoption: process %d does not listen on %s", pid, addr)
}

// listeningInodes are the inodes of the TCP sockets listening on addr
// (":80" is the wildcard address, IPv4 or IPv6).
func listeningInodes(addr string) (map[string]bool, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("adoption: %s: %w", addr, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, fmt.Errorf("adoption: %s: %w", addr, err)
	}
	ip := net.ParseIP(host)
	out := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" {
				continue
			}
			lip, lport, ok := procAddr(fs[1])
			if ok && lport == port && (ip == nil && lip.IsUnspecified() || ip != nil && ip.Equal(lip)) {
				out[fs[9]] = true
			}
		}
		_ = fh.Close() // read only
	}
	return out, nil
}

// procAddr decodes /proc/net/tcp's "0100007F:1F90" (the address in the
// host's byte order, 32-bit words).
func procAddr(s string) (net.IP, int, bool) {
	h, p, ok := strings.Cut(s, ":")
	b, err := hex.DecodeString(h)
	port, perr := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || perr != nil || len(b)%4 != 0 {
		return nil, 0, false
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b), int(port), true
}
