package testbed

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A port picked free (FreePort) may be taken by another test's server
// before the process started for it binds it; that process then fails,
// but a connection to the port succeeds — to the other server. So a
// process counts as listening only once the listening socket on its
// address is one of its own descriptors (its process group's, when it
// has one: php-cgi's children share the master's).

// ownsListener reports whether the TCP socket listening on addr is held
// by p (or its process group). Where /proc cannot tell (not Linux), it
// reports true, as a successful connection did before.
func ownsListener(p *proc, addr string) bool {
	inode, ok := listenInode(addr)
	if !ok {
		return true
	}
	want := "socket:[" + inode + "]"
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if !p.includes(pid) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(dir, "fd"))
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && link == want {
				return true
			}
		}
	}
	return false
}

// includes reports whether pid is p's process or in its process group.
func (p *proc) includes(pid int) bool {
	if p.cmd.Process == nil {
		return false
	}
	if pid == p.cmd.Process.Pid {
		return true
	}
	if p.cmd.SysProcAttr == nil || !p.cmd.SysProcAttr.Setpgid {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces, so count from its ')'.
	_, rest, ok := strings.Cut(string(stat), ") ")
	f := strings.Fields(rest)
	return ok && len(f) > 2 && f[2] == strconv.Itoa(p.cmd.Process.Pid)
}

// listenInode is the inode of the socket listening on addr, from
// /proc/net/tcp or tcp6; false when none is found or /proc is not there.
func listenInode(addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	ip := net.ParseIP(host)
	n, err := strconv.Atoi(port)
	if ip == nil || err != nil {
		return "", false
	}
	file, local := "/proc/net/tcp", procAddr(ip.To4(), n)
	if ip.To4() == nil {
		file, local = "/proc/net/tcp6", procAddr(ip.To16(), n)
	}
	f, err := os.Open(file)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && fs[1] == local && fs[3] == "0A" { // 0A: LISTEN
			return fs[9], true
		}
	}
	return "", false
}

// procAddr is ip:port as /proc/net/tcp writes it: the address's 32-bit
// words each in the host's (little-endian) byte order, in hex.
func procAddr(ip net.IP, port int) string {
	var b strings.Builder
	for i := 0; i+4 <= len(ip); i += 4 {
		fmt.Fprintf(&b, "%02X%02X%02X%02X", ip[i+3], ip[i+2], ip[i+1], ip[i])
	}
	fmt.Fprintf(&b, ":%04X", port)
	return b.String()
}
