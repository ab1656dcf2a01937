package purge

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a real redis-server on an ephemeral loopback port, killed
// by t.Cleanup. Stop and Restart keep the port, to simulate an outage and
// an instance change (no persistence: a restart is a new, empty instance).
type redisServer struct {
	t    testing.TB
	bin  string
	dir  string
	port int

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exits
}

// quietRedis keeps go-redis's dial errors, expected here, off stderr.
var quietRedis sync.Once

// startRedis starts redis-server or fails the test: the fan-out tests
// never skip.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found (%v): install the Debian package redis-server (apt-get install -y redis-server)", err)
	}
	quietRedis.Do(func() { redis.SetLogger(RedisLogger{Log: slog.New(slog.DiscardHandler)}) })
	r := &redisServer{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(r.Stop)
	var last error
	for range 5 {
		if r.port, err = freePort(); err != nil {
			t.Fatalf("pick a port: %v", err)
		}
		if last = r.start(); last == nil {
			return r
		}
	}
	t.Fatalf("start redis-server: %v", last)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs redis-server on r.port and waits until it answers PING.
func (r *redisServer) start() error {
	logf, err := os.OpenFile(filepath.Join(r.dir, "redis.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(r.bin,
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", r.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // exit status is irrelevant: we kill it
	r.cmd, r.done = cmd, done

	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		if ping(r.Addr()) == nil {
			return nil
		}
		select {
		case <-done: // e.g. the port was taken meanwhile
			return fmt.Errorf("redis-server on port %d exited:\n%s", r.port, r.log())
		case <-deadline:
			r.Stop()
			return fmt.Errorf("redis-server on port %d never answered PING:\n%s", r.port, r.log())
		case <-tick.C:
		}
	}
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second)) // a failed read reports it
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func (r *redisServer) log() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "redis.log")) // best effort, for a failure message
	return string(b)
}

// Addr is host:port.
func (r *redisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// URL is the redis:// URL of database 0.
func (r *redisServer) URL() string { return "redis://" + r.Addr() + "/0" }

// Stop kills the server (SIGKILL: an outage, not a shutdown) and waits
// for it to exit.
func (r *redisServer) Stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill() // fails only if it already exited
	<-r.done
	r.cmd = nil
}

// Restart stops the server if it runs and starts a new one on the same
// port.
func (r *redisServer) Restart() {
	r.t.Helper()
	r.Stop()
	var err error
	for range 20 { // the port may linger briefly
		if err = r.start(); err == nil {
			return
		}
	}
	r.t.Fatalf("restart redis-server on port %d: %v", r.port, err)
}

// tcpCut forwards a loopback port to a target and can cut the link, to
// simulate one node losing its network while Redis and the others stay up.
type tcpCut struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu      sync.Mutex // guards cut, conns
	cut     bool
	conns   map[net.Conn]struct{}
	refused atomic.Int64 // connections refused while cut
}

func startCut(t testing.TB, target string) *tcpCut {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &tcpCut{target: target, ln: ln, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// URL is the redis:// URL through the link.
func (p *tcpCut) URL() string { return "redis://" + p.ln.Addr().String() + "/0" }

func (p *tcpCut) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // listener closed
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			p.refused.Add(1)
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, time.Second)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *tcpCut) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src) // ends when either side closes
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes every forwarded connection and refuses new ones.
func (p *tcpCut) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Mend accepts connections again.
func (p *tcpCut) Mend() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

func (p *tcpCut) close() {
	_ = p.ln.Close() // ends accept; cannot fail otherwise
	p.Cut()
	p.wg.Wait()
}
