package testbed

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Redis is one redis-server at a time on a 127.0.0.1 port, without
// persistence unless asked, that a test can stop, kill, pause and restart
// on the same port (a restart is then a new, empty instance, or with an
// append-only file the same data).
type Redis struct {
	Port int
	Addr string // 127.0.0.1:port
	URL  string // redis://127.0.0.1:port/0

	bin string
	dir string
	// aof: the instance keeps an append-only file in dir, fsynced on every
	// write, so a restart is the same instance with its data.
	aof bool
	// extra are more arguments of redis-server (a replica's replicaof).
	extra []string

	mu   sync.Mutex // guards p, logs
	p    *proc      // the running instance; nil while stopped
	logs []string   // output of instances that have exited
}

// StartRedis starts redis-server on a port of its own and returns once it
// answers PING. It is stopped at cleanup; its output is logged when the
// test failed.
func StartRedis(t testing.TB) *Redis { t.Helper(); return startRedis(t, false, nil) }

// StartPersistentRedis is StartRedis with an append-only file
// (appendonly yes, appendfsync always): Restart brings back its data.
func StartPersistentRedis(t testing.TB) *Redis { t.Helper(); return startRedis(t, true, nil) }

func startRedis(t testing.TB, aof bool, extra []string) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testbed: redis-server not found (install the Debian package redis-server): %v", err)
	}
	r := &Redis{bin: bin, dir: t.TempDir(), aof: aof, extra: extra}
	t.Cleanup(func() {
		r.Stop()
		if t.Failed() {
			t.Logf("redis-server output:\n%s", r.Output())
		}
	})
	err = retryPorts(func() (bool, error) {
		r.Port = FreePort(t)
		r.Addr = loopback(r.Port)
		r.URL = "redis://" + r.Addr + "/0"
		return r.start()
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// start runs one instance on r.Port and waits until it answers PING.
// retry says the port was taken.
func (r *Redis) start() (retry bool, err error) {
	aof := "no"
	if r.aof {
		aof = "yes"
	}
	p, err := startProc(procSpec{bin: r.bin, dir: r.dir, args: append([]string{
		"--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", aof, "--appendfsync", "always", "--dir", r.dir,
	}, r.extra...)})
	if err != nil {
		return false, err
	}
	var last error
	ok := Poll(startTimeout, func() bool {
		if p.exited() {
			return true
		}
		var reply string
		reply, last = redisDo(r.Addr, "PING")
		return last == nil && reply == "PONG"
	})
	if !ok || p.exited() {
		p.stop(syscall.SIGKILL)
		out := p.out.String()
		r.keepLog(out)
		return addrInUse(out), fmt.Errorf("testbed: redis-server on port %d did not answer PING within %v (exited=%v, last %v):\n%s", r.Port, startTimeout, p.exited(), last, out)
	}
	r.mu.Lock()
	r.p = p
	r.mu.Unlock()
	return false, nil
}

func (r *Redis) keepLog(out string) {
	r.mu.Lock()
	r.logs = append(r.logs, out)
	r.mu.Unlock()
}

// halt ends the running instance with sig and waits for it to exit.
func (r *Redis) halt(sig syscall.Signal) {
	r.mu.Lock()
	p := r.p
	r.p = nil
	r.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.signal(syscall.SIGCONT) // a paused server could not act on SIGTERM
	p.stop(sig)
	r.keepLog(p.out.String())
}

// Stop shuts the server down (SIGTERM) and waits for it. Idempotent.
func (r *Redis) Stop() { r.halt(syscall.SIGTERM) }

// Kill kills the server (SIGKILL: a crash, not a shutdown) and waits for
// it.
func (r *Redis) Kill() { r.halt(syscall.SIGKILL) }

// Pause stops the server with SIGSTOP: connections stay open and
// connects still succeed, but nothing is answered, as on a network drop.
// Resume undoes it; a paused server is resumed at cleanup.
func (r *Redis) Pause(t testing.TB) {
	t.Helper()
	r.signal(t, syscall.SIGSTOP)
	r.mu.Lock()
	pid := r.p.cmd.Process.Pid
	r.mu.Unlock()
	if !Poll(10*time.Second, func() bool { return AllThreadsStopped(pid) }) {
		t.Fatalf("testbed: redis-server not stopped 10 s after SIGSTOP")
	}
}

// Resume continues a paused server.
func (r *Redis) Resume(t testing.TB) {
	t.Helper()
	r.signal(t, syscall.SIGCONT)
}

func (r *Redis) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	if p == nil {
		t.Fatal("testbed: redis-server is not running")
	}
	if err := p.signal(sig); err != nil {
		t.Fatalf("testbed: signal %v to redis-server: %v", sig, err)
	}
}

// Restart stops the server if it runs and starts a new instance (empty,
// unless it keeps an append-only file) on the same port, waiting up to 10 s for the port to be free again.
func (r *Redis) Restart(t testing.TB) {
	t.Helper()
	r.Stop()
	var err error
	Poll(10*time.Second, func() bool {
		var retry bool
		retry, err = r.start()
		return err == nil || !retry
	})
	if err != nil {
		t.Fatalf("testbed: restart redis-server on port %d: %v", r.Port, err)
	}
}

// Output is what every instance so far wrote.
func (r *Redis) Output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := strings.Join(r.logs, "--- restart\n")
	if r.p != nil {
		out += "--- running\n" + r.p.out.String()
	}
	return out
}

// Do runs one command on a new connection and fails the test on any
// error; see Query for the reply's form.
func (r *Redis) Do(t testing.TB, args ...string) string {
	t.Helper()
	reply, err := r.Query(args...)
	if err != nil {
		t.Fatalf("redis %s: %v", strings.Join(args, " "), err)
	}
	return reply
}

// Query runs one command on a new connection and returns its reply: the
// text of a simple string, bulk string or integer, array elements joined
// by newlines. A Redis error reply is an error.
func (r *Redis) Query(args ...string) (string, error) {
	return redisDo(r.Addr, args...)
}
