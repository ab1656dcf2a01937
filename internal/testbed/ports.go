package testbed

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// FreePorts returns n distinct 127.0.0.1 ports that were free a moment
// ago. Another process may take one before the caller binds it, so the
// Start functions retry with new ports when a bind fails.
//
// They are chosen below the kernel's range of ephemeral ports
// (net.ipv4.ip_local_port_range), from which every outgoing connection
// takes its local port. A port the kernel offered for port 0 lies in
// that range: free as it is chosen, it may be a client connection's
// local port the next moment, and the server then fails to bind it.
// make test runs packages side by side, some of which open tens of
// thousands of connections in seconds ("bind: address already in use",
// a WordPress test's ramjet, beside a flood of new connections).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, port, err := listenFree()
		if err != nil {
			t.Fatalf("testbed: free port: %v", err)
		}
		defer l.Close() // held until all are chosen, so they differ
		if handedOut.take(port) {
			ports = append(ports, port)
		}
	}
	return ports
}

// FreePort returns one 127.0.0.1 port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// listenFree listens on a port below the ephemeral range, or, when the
// range leaves no room below it, on one the kernel picks.
func listenFree() (net.Listener, int, error) {
	lo, hi := quietPorts()
	for try := 0; hi > lo && try < 200; try++ {
		port := lo + rand.IntN(hi-lo)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return l, port, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	return l, l.Addr().(*net.TCPAddr).Port, nil
}

// quietPorts is the range [lo, hi) FreePorts draws from: from 20000
// (above the usual services' ports) to the first ephemeral port.
func quietPorts() (lo, hi int) {
	first := 32768 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var last int
		if _, err := fmt.Sscan(string(b), &first, &last); err != nil {
			first = 32768
		}
	}
	return 20000, first
}

// handedOut is the ports FreePorts returned lately: a port chosen for one
// server and not yet bound is free, and may be drawn again for the next
// (a TLS listener on the admin port's). Remembering the last few
// thousand is enough: a test binds its ports soon after choosing them.
var handedOut = recentPorts{seen: make(map[int]struct{})}

type recentPorts struct {
	mu    sync.Mutex
	seen  map[int]struct{}
	order []int
}

// take reports whether port was not handed out lately, and notes it.
func (r *recentPorts) take(port int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[port]; ok {
		return false
	}
	r.seen[port] = struct{}{}
	r.order = append(r.order, port)
	if len(r.order) > 4096 {
		delete(r.seen, r.order[0])
		r.order = r.order[1:]
	}
	return true
}
