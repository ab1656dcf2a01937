package adoption

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
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
	ln, err := lc.Listen(ctx, "tcp", addr)
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

// listeners counts the listening TCP sockets bound to addr's port, from
// /proc/net/tcp and tcp6.
func listeners(addr string) (int, error) {
	_, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return 0, err
	}
	want := fmt.Sprintf(":%04X", port)
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue // no IPv6
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) > 3 && fs[3] == "0A" && strings.HasSuffix(fs[1], want) {
				n++
			}
		}
		_ = fh.Close() // read only
	}
	return n, nil
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
