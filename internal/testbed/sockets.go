package testbed

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Socket is one TCP socket a process holds.
type Socket struct {
	Local, Remote netip.AddrPort
	State         string // "ESTABLISHED", "LISTEN", "CLOSE_WAIT" (the peer closed), …
}

// tcpStates names the st column of /proc/net/tcp.
var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
	"05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT",
	"09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}

// Sockets lists the TCP sockets (IPv4 and IPv6) that process pid has
// open, read from its file descriptors and /proc/PID/net/tcp{,6}.
func Sockets(pid int) ([]Socket, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return nil, err
	}
	var out []Socket
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, fmt.Errorf("testbed: sockets of %d: %w", pid, err)
		}
		for line := range strings.Lines(string(data)) {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			local, lerr := parseProcAddr(f[1])
			remote, rerr := parseProcAddr(f[2])
			if lerr != nil || rerr != nil {
				return nil, fmt.Errorf("testbed: /proc/%d/net/%s line %q: %w", pid, table, line, errors.Join(lerr, rerr))
			}
			out = append(out, Socket{Local: local, Remote: remote, State: tcpStates[f[3]]})
		}
	}
	return out, nil
}

// socketInodes is the set of socket inodes among pid's descriptors.
func socketInodes(pid int) (map[string]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("testbed: sockets of %d: %w", pid, err)
	}
	inodes := make(map[string]bool)
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return inodes, nil
}

// parseProcAddr parses "0100007F:1F90": the address as the kernel's
// 32-bit words in host (little-endian) order, then the port in hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("address %q: no port", s)
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", s, err)
	}
	if len(raw) != 4 && len(raw) != 16 {
		return netip.AddrPort{}, fmt.Errorf("address %q: %d bytes", s, len(raw))
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port %q: %w", s, err)
	}
	addr, _ := netip.AddrFromSlice(raw) // 4 or 16 bytes, checked above
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}
