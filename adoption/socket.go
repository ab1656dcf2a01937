package adoption

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// ListenReusePort binds addr with SO_REUSEPORT, so that it can share it
// with the web server (whose socket has it too) while both serve, and
// returns the listening socket's file.
func ListenReusePort(ctx context.Context, addr string) (*os.File, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(ctx, family(addr), addr)
	if err != nil {
		return nil, fmt.Errorf("adoption: listen on %s beside the web server: %w", addr, err)
	}
	defer ln.Close() // the file is a duplicate
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, fmt.Errorf("adoption: %s: %w", addr, err)
	}
	return f, nil
}

// family is the network to bind addr with as nginx does: an IPv4
// address IPv4 only, an IPv6 one IPv6 only (nginx's ipv6only=on: a
// socket joins the SO_REUSEPORT group of the web server's only when
// both agree), a wildcard ":80" as Go binds it (both).
func family(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	switch ip := net.ParseIP(host); {
	case err != nil || ip == nil:
		return "tcp"
	case ip.To4() == nil:
		return "tcp6"
	}
	return "tcp4" // Go binds "0.0.0.0:80" as "tcp" dual-stack
}

// migrateQueue is the kernel's switch that moves the connections queued
// on a closing SO_REUSEPORT listener to another one of its group
// instead of resetting them (Linux 5.14).
const migrateQueue = "/proc/sys/net/ipv4/tcp_migrate_req"

func migrateQueuedConnections(log io.Writer) {
	if b, err := os.ReadFile(migrateQueue); err == nil && strings.TrimSpace(string(b)) == "1" {
		return
	}
	if err := os.WriteFile(migrateQueue, []byte("1\n"), 0o644); err != nil && log != nil {
		fmt.Fprintf(log, "ramjet adopt: warning: %v: connections queued on a listener the web server closes may be reset\n", err)
	}
}

func dial(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		_ = c.Close() // only whether it accepts
	}
	return err
}

// listeners counts the listening TCP sockets bound to addr (":80": to
// port 80 of the wildcard address, IPv4 or IPv6), from /proc/net/tcp
// and tcp6.
func listeners(addr string) (int, error) {
	inodes, err := listeningInodes(addr)
	return len(inodes), err
}

// waitListeners waits until the count of sockets listening on addr's
// port satisfies ok (a reload returns before the server acts on it).
func waitListeners(ctx context.Context, addr string, what string, ok func(int) bool) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		got, err := listeners(addr)
		if err != nil {
			return err
		}
		if ok(got) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("adoption: %d sockets listen on %s, waited for %s", got, addr, what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
