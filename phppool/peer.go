package phppool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Finding which php-cgi child accepted a connection. Every child of a
// master accepts on the same listening socket, so the connection alone
// does not say which process serves it. The kernel does: sock_diag names
// the socket at the other end of a Unix connection (UNIX_DIAG_PEER), and
// /proc/PID/fd shows which child holds that socket.

// errNoPeer: no child of the master holds the connection's other end.
var errNoPeer = errors.New("no php-cgi child holds the connection")

// sock_diag's Unix family, from linux/unix_diag.h (not in x/sys).
const (
	udiagShowPeer  = 0x4
	unixDiagPeer   = 2
	diagNoCookie   = ^uint32(0)
	unixDiagReqLen = 24
	unixDiagMsgLen = 16
	diagTimeout    = time.Second
)

// childHolding returns the pid of the child of master that holds the other
// end of the Unix connection nc.
func childHolding(master int, nc net.Conn) (int, error) {
	ino, err := socketInode(nc)
	if err != nil {
		return 0, err
	}
	peer, err := peerInode(ino)
	if err != nil {
		return 0, err
	}
	want := []byte("socket:[" + strconv.FormatUint(uint64(peer), 10) + "]")
	// The kernel's children list misses children while others are forked
	// or exit (proc(5)): as a worker dies and the master forks its
	// replacement. Every process's parent is then read instead.
	for _, list := range []func(int) []int{childrenOf, childrenByParent} {
		for _, pid := range list(master) {
			if holdsSocket(pid, want) {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("phppool: peer socket %d of master %d: %w", peer, master, errNoPeer)
}

// socketInode is the inode of nc's own socket.
func socketInode(nc net.Conn) (uint32, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("phppool: %T has no file descriptor", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("phppool: socket inode: %w", err)
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil {
		return 0, fmt.Errorf("phppool: socket inode: %w", err)
	}
	if serr != nil {
		return 0, fmt.Errorf("phppool: socket inode: %w", serr)
	}
	return uint32(st.Ino), nil
}

// peerInode asks sock_diag for the inode of the peer of the Unix socket
// with inode ino (0 while nobody accepted the connection yet).
func peerInode(ino uint32) (uint32, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("phppool: sock_diag: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(diagTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return 0, fmt.Errorf("phppool: sock_diag: %w", err)
	}
	if err := unix.Sendto(fd, diagRequest(ino), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("phppool: sock_diag request: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("phppool: sock_diag reply: %w", err)
	}
	return parseDiagReply(buf[:n])
}

// diagRequest is a netlink message asking for one Unix socket by inode,
// with its peer.
func diagRequest(ino uint32) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN+unixDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	r := b[unix.NLMSG_HDRLEN:]
	r[0] = unix.AF_UNIX
	ne.PutUint32(r[4:], ^uint32(0)) // every state
	ne.PutUint32(r[8:], ino)
	ne.PutUint32(r[12:], udiagShowPeer)
	ne.PutUint32(r[16:], diagNoCookie)
	ne.PutUint32(r[20:], diagNoCookie)
	return b
}

// parseDiagReply reads the peer inode from sock_diag's answer.
func parseDiagReply(b []byte) (uint32, error) {
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return 0, fmt.Errorf("phppool: sock_diag reply: %w", err)
	}
	ne := binary.NativeEndian
	for _, m := range msgs {
		switch m.Header.Type {
		case unix.NLMSG_ERROR:
			if len(m.Data) >= 4 {
				if errno := -int32(ne.Uint32(m.Data)); errno != 0 {
					return 0, fmt.Errorf("phppool: sock_diag: %w", syscall.Errno(errno))
				}
			}
		case unix.SOCK_DIAG_BY_FAMILY:
			attrs := m.Data[min(len(m.Data), unixDiagMsgLen):]
			for len(attrs) >= 4 {
				l, typ := int(ne.Uint16(attrs)), ne.Uint16(attrs[2:])
				if l < 4 || l > len(attrs) {
					break
				}
				if typ == unixDiagPeer && l >= 8 {
					return ne.Uint32(attrs[4:]), nil
				}
				attrs = attrs[min(len(attrs), (l+3)&^3):]
			}
			return 0, nil // no peer (yet)
		}
	}
	return 0, fmt.Errorf("phppool: sock_diag: no answer: %w", errNoPeer)
}

// childrenOf lists the children of pid (/proc/PID/task/PID/children).
func childrenOf(pid int) []int {
	p := strconv.Itoa(pid)
	b, err := os.ReadFile("/proc/" + p + "/task/" + p + "/children")
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if c, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// childrenByParent lists the processes whose parent is pid, from every
// process's /proc/PID/stat: slower than childrenOf, but reliable.
func childrenByParent(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(c) == pid {
			out = append(out, c)
		}
	}
	return out
}

// parentOf is the parent pid in /proc/PID/stat, 0 when unknown.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces and parentheses: fields follow
	// its last ')': state, then the parent.
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	return ppid
}

// holdsSocket reports whether process pid has a descriptor whose link
// reads link ("socket:[N]").
func holdsSocket(pid int, link []byte) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && l == string(link) {
			return true
		}
	}
	return false
}

// groupMembers lists the processes in process group pgid, except pgid
// itself.
func groupMembers(pgid int) []int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, d := range dirs {
		if pid, err := strconv.Atoi(d.Name()); err == nil && pid != pgid && pgrpOf(pid) == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// pgrpOf is the process group of pid (/proc/PID/stat's fifth field), or
// -1 when it is gone.
func pgrpOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return -1
	}
	return g
}
