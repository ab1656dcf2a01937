package proxy

import (
	"io"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestKeepAliveProbesOnlyWithoutIdleTimeout: an accepted connection gets
// TCP keep-alive probes only when nothing else would end it (no idle
// timeout); with one, the four setsockopt calls are skipped, as nginx
// skips them.
func TestKeepAliveProbesOnlyWithoutIdleTimeout(t *testing.T) {
	for _, tt := range []struct {
		idle      time.Duration
		wantProbe bool
	}{{time.Minute, false}, {0, true}} {
		t.Run(tt.idle.String(), func(t *testing.T) {
			s := startServer(t, ServerConfig{IdleTimeout: tt.idle})
			c, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Answered: the server has accepted and configured the socket.
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(make([]byte, 512)); err != nil {
				t.Fatal(err)
			}
			on, err := keepAliveOfPeer(c.LocalAddr().(*net.TCPAddr))
			if err != nil {
				t.Fatal(err)
			}
			if on != tt.wantProbe {
				t.Fatalf("SO_KEEPALIVE on the accepted socket = %v, want %v", on, tt.wantProbe)
			}
		})
	}
}

// keepAliveOfPeer finds this process's socket connected to peer (the
// server's end of a test connection) and reads its SO_KEEPALIVE.
func keepAliveOfPeer(peer *net.TCPAddr) (bool, error) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false, err
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		sa, err := unix.Getpeername(fd)
		in, ok := sa.(*unix.SockaddrInet4)
		if err != nil || !ok || in.Port != peer.Port {
			continue
		}
		v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		return v != 0, err
	}
	return false, os.ErrNotExist
}
