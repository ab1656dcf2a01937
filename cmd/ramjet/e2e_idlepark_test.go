package main_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestParkedConnectionsAreDetachedAndAnswerTheirOwnClientsAcrossAReload:
// idle keep-alive connections wait parked, each socket watched by the
// parking lot's epoll set alone (not also by Go's poller: no netFD, no
// poll descriptor per idle connection); across a config reload each is
// woken by its client's next request and answers that client's own
// page, a hit; parked again, a client that hangs up frees its
// connection, descriptor and place under the limits.
func TestParkedConnectionsAreDetachedAndAnswerTheirOwnClientsAcrossAReload(t *testing.T) {
	origin := ownPagesOrigin(t)
	dir := t.TempDir()
	conf := func(ttl string) string {
		return "server:\n  idle_timeout: 60s\ndefaults:\n  default_ttl: " + ttl + "\n"
	}
	cfg := testbed.WriteConfig(t, dir, conf("60s"))
	rj := startRamjet(t, origin.URL, "--config", cfg)
	const n = 40
	clients := make([]*rawConn, n)
	for i := range clients {
		clients[i] = dialRaw(t, rj.Addr)
		askOwnPage(t, clients[i], i, false)
	}
	waitParked(t, rj, n)
	if twice := socketsInTwoPollSets(t, rj.Pid()); twice > 0 {
		t.Fatalf("%d sockets are in two epoll sets (the lot's and Go's poller): parked connections are not detached", twice)
	}

	reloads := `ramjet_reloads_total{result="ok"}`
	testbed.WriteConfig(t, dir, conf("120s"))
	rj.Signal(t, syscall.SIGHUP)
	if !testbed.Poll(10*time.Second, func() bool { return metricValue(t, rj.AdminURL, reloads) == 1 }) {
		t.Fatalf("%s = %v, want 1", reloads, metricValue(t, rj.AdminURL, reloads))
	}
	for round := range 2 {
		for i, c := range clients {
			askOwnPage(t, c, i, true)
		}
		waitParked(t, rj, n)
		if round == 0 {
			time.Sleep(50 * time.Millisecond) // and wake them after a second park
		}
	}

	for _, c := range clients[n/2:] {
		c.c.Close()
	}
	open := `ramjet_client_connections{listener="main"}`
	if !testbed.Poll(10*time.Second, func() bool { return metricValue(t, rj.AdminURL, open) == n/2 }) {
		t.Fatalf("%s = %v after %d clients hung up, want %d", open, metricValue(t, rj.AdminURL, open), n/2, n/2)
	}
	waitParked(t, rj, n/2)
	for _, c := range clients[:n/2] {
		c.c.Close()
	}
	// A descriptor left open would keep its socket in CLOSE_WAIT.
	if !testbed.Poll(10*time.Second, func() bool { return serverSockets(t, rj.Addr) == 0 }) {
		t.Fatalf("%d sockets of the listener %s left after every client hung up", serverSockets(t, rj.Addr), rj.Addr)
	}
}

// askOwnPage asks for client i's own page on c and wants it back (a hit
// when hit).
func askOwnPage(t *testing.T, c *rawConn, i int, hit bool) {
	t.Helper()
	path := "/own/" + strconv.Itoa(i)
	resp, err := c.getBody(path)
	if err != nil {
		t.Fatalf("client %d: %v", i, err)
	}
	if resp.status != 200 || resp.body != "page "+path {
		t.Fatalf("client %d asked for %s: %d %q (another connection's answer?)", i, path, resp.status, resp.body)
	}
	if hit && !strings.Contains(resp.cacheStatus, "hit") {
		t.Fatalf("client %d after parking: Cache-Status %q, want a hit", i, resp.cacheStatus)
	}
}

type answer struct {
	status      int
	body        string
	cacheStatus string
}

// getBody is rawConn.get with the body kept.
func (r *rawConn) getBody(path string) (answer, error) {
	if _, err := io.WriteString(r.c, "GET "+path+" HTTP/1.1\r\nHost: conns.test\r\n\r\n"); err != nil {
		return answer{}, err
	}
	_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil {
		return answer{}, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("GET %s: body: %w", path, err)
	}
	return answer{resp.StatusCode, string(b), resp.Header.Get("Cache-Status")}, nil
}

func waitParked(t *testing.T, rj *testbed.Ramjet, n int) {
	t.Helper()
	parked := `ramjet_client_connections_parked{listener="main"}`
	if !testbed.Poll(10*time.Second, func() bool { return metricValue(t, rj.AdminURL, parked) == float64(n) }) {
		t.Fatalf("%s = %v, want %d", parked, metricValue(t, rj.AdminURL, parked), n)
	}
}

// serverSockets counts the TCP sockets, the listening one aside, whose
// local address is addr's port: the server's side of its connections,
// open or not yet closed (proc(5), /proc/net/tcp).
func serverSockets(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf(":%04X", p)
	n := 0
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		const listening = "0A"
		if len(f) > 3 && strings.HasSuffix(f[1], suffix) && f[3] != listening {
			n++
		}
	}
	return n
}

// socketsInTwoPollSets counts the sockets (by inode) that more than one
// of pid's epoll sets watches, from /proc/PID/fdinfo (proc(5): a "tfd:"
// line per watched descriptor, with its inode).
func socketsInTwoPollSets(t *testing.T, pid int) int {
	t.Helper()
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]int{} // socket inode: epoll sets watching it
	for _, e := range ents {
		if link, err := os.Readlink(filepath.Join(fdDir, e.Name())); err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(string(info), "\n") {
			if !strings.HasPrefix(line, "tfd:") {
				continue
			}
			for _, f := range strings.Fields(line) {
				if ino, ok := strings.CutPrefix(f, "ino:"); ok && !seen[ino] {
					seen[ino] = true
					sets[ino]++
				}
			}
		}
	}
	twice := 0
	for _, k := range sets {
		if k > 1 {
			twice++
		}
	}
	return twice
}

// TestTheWorkersABurstLeftIdleEndWithinSeconds: a burst of connections
// that go idle leaves as many fasthttp workers waiting, each on a stack
// its requests grew; they end within a few seconds (conns.WorkerIdle),
// not fasthttp's 10-20, so that the release after them gives their
// stacks back while the connections are still idle.
func TestTheWorkersABurstLeftIdleEndWithinSeconds(t *testing.T) {
	origin := ownPagesOrigin(t)
	rj := startRamjet(t, origin.URL)
	goroutines := func() float64 { return metricValue(t, rj.AdminURL, "go_goroutines") }
	before := goroutines()
	const n = 300
	clients := make([]*rawConn, n)
	for i := range clients {
		clients[i] = dialRaw(t, rj.Addr)
	}
	errs := make(chan error, n)
	for i, c := range clients { // all at once: each request on a worker of its own
		go func() {
			resp, err := c.getBody("/own/" + strconv.Itoa(i%10))
			if err == nil && resp.status != 200 {
				err = fmt.Errorf("status %d", resp.status)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	waitParked(t, rj, n)
	peak := goroutines()
	start := time.Now()
	if !testbed.Poll(5*time.Second, func() bool { return goroutines() < before+32 }) {
		t.Fatalf("goroutines: %v before the burst, %v with its %d connections parked, %v after 5 s: its workers still wait",
			before, peak, n, goroutines())
	}
	t.Logf("goroutines %v -> %v -> %v within %v", before, peak, goroutines(), time.Since(start).Round(100*time.Millisecond))
}
