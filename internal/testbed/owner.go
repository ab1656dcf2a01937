package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A port picked free (FreePort) may be taken by another test's server
// before the process started for it binds it; that process then fails,
// but a connection to the port succeeds — to the other server. So a
// process counts as listening only once the listening socket on its
// address is one of its own descriptors (its process group's, when it
// has one: php-cgi's children share the master's).

// ownsListener reports whether the TCP socket listening on addr
// (127.0.0.1:port) is held by p or its process group. Where /proc cannot
// tell (not Linux, an address it does not list), it reports true, as a
// successful connection did before.
func ownsListener(p *proc, addr string) bool {
	all, err := TCPConns()
	if err != nil {
		return true
	}
	i := slices.IndexFunc(all, func(c TCPConn) bool { return c.Local == addr && c.State == "LISTEN" })
	if i < 0 || all[i].Inode == 0 {
		return true
	}
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if !p.includes(pid) {
			continue
		}
		if inodes, err := socketFDs(pid); err == nil && slices.Contains(inodes, all[i].Inode) {
			return true
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
