package conns

import (
	"errors"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// A parked plain TCP connection is detached from Go's runtime: the lot
// keeps a descriptor of the socket (a dup) and the *net.TCPConn is
// closed. Go's netpoller keeps a descriptor of its own for each socket
// it knows (about 250 bytes off the heap, which the runtime never gives
// back, and a timer in it), and the net.TCPConn its netFD and two
// addresses: with them an idle connection costs about twice as much.
// Waking makes a net.Conn on the socket again (net.FileConn): a client
// whose pause outlasted its linger pays about a dozen system calls more,
// next to a pause of at least the linger. A connection under a PROXY
// header's wrapper (no RawConn) stays attached.

// detach closes c's net.Conn and keeps a descriptor of its socket for
// the lot; on failure (out of descriptors) c stays attached. c is
// parking: nothing else reads or writes it, and its socket is in no
// epoll set (the lot's wake takes a woken one out).
func (c *Conn) detach() {
	if c.rc == nil {
		return
	}
	fd, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return
	}
	_ = c.Conn.Close() // the socket lives on in fd
	c.Conn, c.sock, c.rc, c.fd = detached{}, detached{}, nil, fd
}

// attach makes a detached c a net.Conn on its socket again as the lot
// wakes it (after taking it out of the set); on failure the socket is
// closed.
func (c *Conn) attach() error {
	if !c.isDetached() {
		return nil
	}
	// net.FileConn turns TCP keep-alive probes on (Go's default for a new
	// connection); a listener that had them off (ListenTCP with an idle
	// timeout) keeps them off.
	probes, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	if err != nil {
		_ = unix.Close(c.fd)
		return err
	}
	f := os.NewFile(uintptr(c.fd), "parked")
	nc, err := net.FileConn(f) // a descriptor of its own
	_ = f.Close()
	if err != nil {
		return err
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		_ = nc.Close()
		return errors.New("conns: a parked socket is not TCP")
	}
	if probes == 0 {
		if err := tc.SetKeepAlive(false); err != nil {
			_ = nc.Close()
			return err
		}
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		_ = nc.Close()
		return err
	}
	c.Conn, c.sock, c.rc, c.fd = tc, tc, rc, socketFD(tc)
	return nil
}

// closeDetached closes a detached c's socket; the set forgets it with
// its last descriptor.
func (c *Conn) closeDetached() error {
	return unix.Close(c.fd)
}
