package main_test

// Redis side of the end-to-end harness: a real redis-server on an
// ephemeral loopback port, without persistence, that a test can kill and
// restart on the same port (a restart is then a new, empty instance), and
// a minimal RESP client to look at or tamper with the purge stream.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// redisServer is one redis-server process at a time on a fixed port.
type redisServer struct {
	t    testing.TB
	bin  string
	dir  string
	Port int
	Addr string // 127.0.0.1:port
	URL  string // redis://127.0.0.1:port/0

	mu   sync.Mutex // guards p, logs
	p    *proc      // the running instance; nil while stopped
	logs []string   // output of instances that have exited
}

// startRedis starts redis-server on an ephemeral loopback port and stops it
// at cleanup. It fails, never skips, when redis-server is missing.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found (%v): the fan-out tests need it; install it with `apt-get install redis-server`", err)
	}
	r := &redisServer{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(func() {
		r.Stop()
		if t.Failed() {
			t.Logf("redis-server output:\n%s", r.Output())
		}
	})
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		r.Port = freePort(t)
		r.Addr = fmt.Sprintf("127.0.0.1:%d", r.Port)
		r.URL = "redis://" + r.Addr + "/0"
		var retry bool
		if retry, last = r.start(); last == nil {
			return r
		}
		if !retry {
			break
		}
	}
	t.Fatalf("redis-server: %v", last)
	return nil
}

// start runs one instance on r.Port and waits until it answers PING. retry
// says the port was taken.
func (r *redisServer) start() (retry bool, err error) {
	p, err := startProc(r.bin, []string{
		"--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir,
	}, r.dir)
	if err != nil {
		return false, err
	}
	ok := pollUntil(startTimeout, func() bool {
		if p.exited() {
			return true
		}
		reply, err := redisDo(r.Addr, "PING")
		return err == nil && reply == "PONG"
	})
	if !ok || p.exited() {
		p.stop(syscall.SIGKILL)
		out := p.out.String()
		r.mu.Lock()
		r.logs = append(r.logs, out)
		r.mu.Unlock()
		return addrInUse(out), fmt.Errorf("redis-server on port %d did not answer PING within %v (exited=%v):\n%s", r.Port, startTimeout, p.exited(), out)
	}
	r.mu.Lock()
	r.p = p
	r.mu.Unlock()
	return false, nil
}

// halt ends the running instance with sig and waits for it to exit.
func (r *redisServer) halt(sig syscall.Signal) {
	r.mu.Lock()
	p := r.p
	r.p = nil
	r.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused server could not act on SIGTERM
	p.stop(sig)
	r.mu.Lock()
	r.logs = append(r.logs, p.out.String())
	r.mu.Unlock()
}

// Stop shuts the server down (SIGTERM) and waits for it. Idempotent.
func (r *redisServer) Stop() { r.halt(syscall.SIGTERM) }

// Kill kills the server (SIGKILL: a crash, not a shutdown) and waits for it.
func (r *redisServer) Kill() { r.halt(syscall.SIGKILL) }

// Pause stops the server with SIGSTOP: connections stay open and
// connects still succeed, but nothing is answered, as on a network drop.
// Resume undoes it; a paused server is resumed at cleanup.
func (r *redisServer) Pause(t testing.TB) {
	t.Helper()
	r.signal(t, syscall.SIGSTOP)
}

// Resume continues a paused server.
func (r *redisServer) Resume(t testing.TB) {
	t.Helper()
	r.signal(t, syscall.SIGCONT)
}

func (r *redisServer) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	if p == nil {
		t.Fatalf("redis-server is not running")
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to redis-server: %v", sig, err)
	}
}

// Restart stops the server if it runs and starts a new, empty instance on
// the same port.
func (r *redisServer) Restart(t testing.TB) {
	t.Helper()
	r.Stop()
	var err error
	for attempt := 0; attempt < 20; attempt++ { // the port may linger briefly
		var retry bool
		if retry, err = r.start(); err == nil || !retry {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("restart redis-server on port %d: %v", r.Port, err)
	}
}

// Output is what every instance so far wrote.
func (r *redisServer) Output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := strings.Join(r.logs, "--- restart\n")
	if r.p != nil {
		out += "--- running\n" + r.p.out.String()
	}
	return out
}

// Do runs one command on the server and fails the test on any error.
func (r *redisServer) Do(t testing.TB, args ...string) string {
	t.Helper()
	reply, err := redisDo(r.Addr, args...)
	if err != nil {
		t.Fatalf("redis %s: %v", strings.Join(args, " "), err)
	}
	return reply
}

// redisDo sends one command on a new connection and returns its reply:
// the text of a simple string, bulk string or integer, and array elements
// joined by newlines. A Redis error reply is an error.
func redisDo(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return "", err
	}
	return readRESP(bufio.NewReader(c), 0)
}

func readRESP(br *bufio.Reader, depth int) (string, error) {
	if depth > 8 {
		return "", errors.New("RESP reply nested too deeply")
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("empty RESP line")
	}
	switch body := line[1:]; line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", fmt.Errorf("redis error: %s", body)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", fmt.Errorf("bulk length %q: %w", body, err)
		}
		if n < 0 {
			return "", nil // nil bulk
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", fmt.Errorf("array length %q: %w", body, err)
		}
		parts := make([]string, 0, max(n, 0))
		for range n {
			s, err := readRESP(br, depth+1)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", fmt.Errorf("unexpected RESP line %q", line)
}
