package testbed

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// SocketCount is how many sockets process pid holds open (listening ones
// included). php-cgi holds two while a connection it accepted is open and
// one once it has dropped it.
func SocketCount(pid int) (int, error) {
	inodes, err := socketFDs(pid)
	return len(inodes), err
}

// socketFDs is the socket inode of each descriptor of process pid that is
// a socket (a socket open twice is there twice).
func socketFDs(pid int) ([]uint64, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("testbed: sockets of %d: %w", pid, err)
	}
	var inodes []uint64
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if n, ok := strings.CutPrefix(link, "socket:["); ok {
			inode, _ := strconv.ParseUint(strings.TrimSuffix(n, "]"), 10, 64) // the kernel writes decimal
			inodes = append(inodes, inode)
		}
	}
	return inodes, nil
}

// TCPConn is one IPv4 TCP socket of this network namespace, as
// /proc/net/tcp lists it.
type TCPConn struct {
	Local, Remote string // 127.0.0.1:port
	State         string // "ESTABLISHED", "TIME_WAIT", "CLOSE_WAIT", …
	Inode         uint64 // 0 once no process holds it (TIME_WAIT)
}

// ClosedHere reports whether this end closed the connection first: it
// sent its FIN before the peer's came (FIN_WAIT1, FIN_WAIT2, CLOSING or
// TIME_WAIT). An end whose peer closed first is in CLOSE_WAIT or LAST_ACK,
// and the TIME_WAIT is the peer's.
func (c TCPConn) ClosedHere() bool {
	switch c.State {
	case "FIN_WAIT1", "FIN_WAIT2", "CLOSING", "TIME_WAIT":
		return true
	}
	return false
}

// tcpStates are the st column's values, by the kernel's numbering.
var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
	"05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT",
	"09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}

// TCPConns lists the IPv4 TCP sockets of this network namespace.
func TCPConns() ([]TCPConn, error) {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	var conns []TCPConn
	for line := range strings.Lines(string(data)) {
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
		f := strings.Fields(line)
		if len(f) < 10 || f[0] == "sl" {
			continue
		}
		local, lerr := hexAddr(f[1])
		remote, rerr := hexAddr(f[2])
		inode, ierr := strconv.ParseUint(f[9], 10, 64)
		if err := errors.Join(lerr, rerr, ierr); err != nil {
			return nil, fmt.Errorf("testbed: /proc/net/tcp line %q: %w", line, err)
		}
		conns = append(conns, TCPConn{Local: local, Remote: remote, State: tcpStates[f[3]], Inode: inode})
	}
	return conns, nil
}

// hexAddr turns /proc/net/tcp's "0100007F:1F90" (the address in host
// byte order, little endian here) into "127.0.0.1:8080".
func hexAddr(s string) (string, error) {
	ip, port, ok := strings.Cut(s, ":")
	a, err := strconv.ParseUint(ip, 16, 32)
	p, perr := strconv.ParseUint(port, 16, 16)
	if !ok || err != nil || perr != nil {
		return "", fmt.Errorf("address %q", s)
	}
	return fmt.Sprintf("%d.%d.%d.%d:%d", byte(a), byte(a>>8), byte(a>>16), byte(a>>24), p), nil
}

// ConnsTo lists the TCP connections process pid holds to remote
// (127.0.0.1:port).
func ConnsTo(pid int, remote string) ([]TCPConn, error) {
	inodes, err := socketFDs(pid)
	if err != nil {
		return nil, err
	}
	all, err := TCPConns()
	if err != nil {
		return nil, err
	}
	var out []TCPConn
	for _, c := range all {
		if c.Remote == remote && c.Inode != 0 && slices.Contains(inodes, c.Inode) {
			out = append(out, c)
		}
	}
	return out, nil
}

// TCPConnBetween is the socket from local to remote as it is now, and
// false when the kernel has forgotten it.
func TCPConnBetween(local, remote string) (TCPConn, bool, error) {
	all, err := TCPConns()
	if err != nil {
		return TCPConn{}, false, err
	}
	for _, c := range all {
		if c.Local == local && c.Remote == remote {
			return c, true, nil
		}
	}
	return TCPConn{}, false, nil
}
