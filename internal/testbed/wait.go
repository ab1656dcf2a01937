package testbed

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// pollEvery is how often Poll checks: short next to every deadline used
// with it, long enough not to load a shared machine.
const pollEvery = 20 * time.Millisecond

// Poll calls f until it returns true or d passes, and reports whether it
// did. f runs at once, then every 20 ms.
func Poll(d time.Duration, f func() bool) bool {
	if f() {
		return true
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			return f()
		case <-tick.C:
			if f() {
				return true
			}
		}
	}
}

// WaitFor polls cond like Poll and fails t when d passes first: the one
// bounded wait of the tests, for conditions nothing signals (a counter, a
// health state, a background goroutine's work). what completes "timed out
// waiting for".
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// loopback is 127.0.0.1:port.
func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// waitListen waits until network/addr accepts a connection, the process
// exits, or startTimeout passes. The probe connection is closed unused.
func waitListen(p *proc, network, addr string) error {
	var last error
	ok := Poll(startTimeout, func() bool {
		if p.exited() {
			return true
		}
		c, err := net.DialTimeout(network, addr, time.Second)
		if err != nil {
			last = err
			return false
		}
		last = c.Close()
		if network == "tcp" && !ownsListener(p, addr) {
			last = fmt.Errorf("%s is another process's (owner.go)", addr)
			return false
		}
		return true
	})
	switch {
	case p.exited():
		return fmt.Errorf("testbed: %s exited before listening on %s: %v", p.name, addr, p.err)
	case !ok:
		return fmt.Errorf("testbed: %s not listening on %s within %v: %w", p.name, addr, startTimeout, last)
	}
	return nil
}

// retryPorts runs start up to five times while it reports that its port
// was taken meanwhile (retry true), and returns its last error.
func retryPorts(start func() (retry bool, err error)) error {
	var err error
	for range 5 {
		var retry bool
		if retry, err = start(); err == nil || !retry {
			return err
		}
	}
	return err
}
