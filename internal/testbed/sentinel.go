package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SentinelMaster is the master name a Sentinel group monitors.
const SentinelMaster = "ramjet"

// Sentinel is a Redis master with one replica and one Sentinel watching
// them (quorum 1, a master is down after 500 ms), for failover tests.
type Sentinel struct {
	Master, Replica *Redis
	Addr            string // the Sentinel's 127.0.0.1:port
	// URL names the master through the Sentinel, in go-redis's failover
	// URL form.
	URL string

	p *proc
}

// StartSentinel starts the master, its replica (in sync before it
// returns) and the Sentinel, which knows both when it returns. All stop at
// cleanup.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	s := &Sentinel{Master: StartRedis(t)}
	s.Replica = startRedis(t, false, []string{"--replicaof", "127.0.0.1", strconv.Itoa(s.Master.Port)})
	if !Poll(10*time.Second, func() bool {
		info, _ := s.Replica.Query("INFO", "replication")
		return strings.Contains(info, "master_link_status:up")
	}) {
		t.Fatalf("testbed: replica on port %d not in sync with its master within 10 s", s.Replica.Port)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("testbed: redis-server not found: %v", err)
	}
	dir := t.TempDir()
	err = retryPorts(func() (bool, error) {
		port := FreePort(t)
		s.Addr = loopback(port)
		return s.start(bin, dir, port)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.p.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("redis-sentinel output:\n%s", s.p.out.String())
		}
	})
	s.URL = fmt.Sprintf("redis://%s/0?master_name=%s", s.Addr, SentinelMaster)
	if !Poll(10*time.Second, func() bool {
		reply, _ := redisDo(s.Addr, "SENTINEL", "REPLICAS", SentinelMaster)
		return strings.Contains(reply, strconv.Itoa(s.Replica.Port))
	}) {
		t.Fatalf("testbed: the sentinel does not know the replica within 10 s:\n%s", s.p.out.String())
	}
	return s
}

func (s *Sentinel) start(bin, dir string, port int) (retry bool, err error) {
	conf := filepath.Join(dir, "sentinel.conf") // Sentinel rewrites it
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds %[3]s 500\nsentinel failover-timeout %[3]s 5000\n",
		port, dir, SentinelMaster, s.Master.Port)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return false, fmt.Errorf("testbed: sentinel config: %w", err)
	}
	p, err := startProc(procSpec{bin: bin, dir: dir, args: []string{conf, "--sentinel"}})
	if err != nil {
		return false, err
	}
	if !Poll(startTimeout, func() bool {
		reply, err := redisDo(s.Addr, "PING")
		return p.exited() || err == nil && reply == "PONG"
	}) || p.exited() {
		p.stop(syscall.SIGKILL)
		out := p.out.String()
		return addrInUse(out), fmt.Errorf("testbed: redis-sentinel on port %d did not answer:\n%s", port, out)
	}
	s.p = p
	return false, nil
}

// MasterPort is the port of the master as the Sentinel names it now.
func (s *Sentinel) MasterPort() int {
	reply, err := redisDo(s.Addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster)
	if err != nil {
		return 0
	}
	lines := strings.Split(reply, "\n")
	port, _ := strconv.Atoi(lines[len(lines)-1])
	return port
}

// Failover kills the master (a crash) and waits until the Sentinel has
// promoted the replica.
func (s *Sentinel) Failover(t testing.TB) {
	t.Helper()
	s.Master.Kill()
	if !Poll(20*time.Second, func() bool { return s.MasterPort() == s.Replica.Port }) {
		t.Fatalf("testbed: the sentinel did not promote the replica within 20 s:\n%s", s.p.out.String())
	}
}
