package main_test

// End-to-end tests of the upgrade handover (SIGUSR2): the binary now on
// disk takes over the listening sockets of the running one, which
// finishes what it has and exits, without a refused connection or a
// lost request.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// upgradable is a ramjet run from a copy of the binary in a directory of
// its own, as a package installs it (the test replaces that file as an
// upgrade does), its output in a file: the process it starts writes
// there too, and the old one's exit is seen while the new one runs.
type upgradable struct {
	bin, logPath string
	url, admin   string
	cmd          *exec.Cmd
	done         chan struct{} // closed when the first process exited
}

func startUpgradable(t *testing.T, args ...string) *upgradable {
	t.Helper()
	u := runUpgradable(t, nil, args...)
	if !testbed.Poll(10*time.Second, func() bool { return u.healthPid() == u.cmd.Process.Pid }) {
		t.Fatalf("ramjet not healthy within 10 s:\n%s", u.output())
	}
	return u
}

// runUpgradable starts `ramjet serve` on ports of its own, through
// wrap's command (e.g. systemd-socket-activate) when not empty.
func runUpgradable(t *testing.T, wrap func(addr string) []string, args ...string) *upgradable {
	t.Helper()
	ports := testbed.FreePorts(t, 2)
	addr, admin := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	u := newUpgradable(t, "http://"+admin)
	u.url = "http://" + addr
	argv := append([]string{u.bin, "serve", "--listen", addr, "--admin", admin}, args...)
	if wrap != nil {
		argv = append(wrap(addr), argv...)
	}
	u.run(t, argv)
	return u
}

// newUpgradable copies the binary into a directory of its own, for a
// ramjet whose admin listener will be at admin (a URL).
func newUpgradable(t *testing.T, admin string) *upgradable {
	t.Helper()
	dir := t.TempDir()
	u := &upgradable{bin: filepath.Join(dir, "ramjet"), logPath: filepath.Join(dir, "ramjet.log"), admin: admin, done: make(chan struct{})}
	copyExecutable(t, testbed.Binary(t), u.bin)
	return u
}

// run starts argv, its output in the log, and stops it at cleanup.
func (u *upgradable) run(t *testing.T, argv []string) {
	t.Helper()
	logf, err := os.Create(u.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close() // the processes hold their own copies
	// A test beside this one that forks while the copy is open for
	// writing gives its child the descriptor for a moment: exec then
	// fails with ETXTBSY until that child has exec'd in turn.
	for try := 0; ; try++ {
		u.cmd = exec.Command(argv[0], argv[1:]...)
		u.cmd.Stdout, u.cmd.Stderr = logf, logf
		err := u.cmd.Start()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ETXTBSY) || try == 50 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	go func() { _ = u.cmd.Wait(); close(u.done) }() // the exit status is read from ProcessState
	t.Cleanup(func() { u.stop(t) })
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// replaceBinary puts content at the binary's path by rename, as dpkg
// does: the running process keeps its old file.
func (u *upgradable) replaceBinary(t *testing.T, content []byte) {
	t.Helper()
	tmp := u.bin + ".dpkg-new"
	if err := os.WriteFile(tmp, content, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, u.bin); err != nil {
		t.Fatal(err)
	}
}

// healthPid is the pid /healthz names, 0 when it does not answer.
func (u *upgradable) healthPid() int {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(u.admin + "/healthz")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var h struct{ Pid int }
	if json.NewDecoder(resp.Body).Decode(&h) != nil {
		return 0
	}
	return h.Pid
}

func (u *upgradable) output() string {
	b, _ := os.ReadFile(u.logPath) // for a failure message: what there is
	return string(b)
}

func (u *upgradable) exited(d time.Duration) bool {
	select {
	case <-u.done:
		return true
	case <-time.After(d):
		return false
	}
}

// stop ends whichever process serves (the new one after an upgrade,
// which is not this test's child) and the first one.
func (u *upgradable) stop(t *testing.T) {
	if pid := u.healthPid(); pid != 0 && pid != u.cmd.Process.Pid {
		_ = syscall.Kill(pid, syscall.SIGTERM) // checked below
		if !testbed.Poll(10*time.Second, func() bool { return !alive(pid) }) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // the test fails anyway
			t.Errorf("upgraded ramjet %d did not exit within 10 s of SIGTERM", pid)
		}
	}
	_ = u.cmd.Process.Signal(syscall.SIGTERM) // may have exited
	if !u.exited(10 * time.Second) {
		_ = u.cmd.Process.Kill() // the test fails anyway
		t.Errorf("ramjet did not exit within 10 s of SIGTERM")
	}
	if t.Failed() {
		t.Logf("ramjet output:\n%s", u.output())
	}
}

// upgradeWithRequestInFlight sends SIGUSR2 and waits until the new
// process serves, while the old one, which has a request in flight,
// still runs.
func (u *upgradable) upgradeWithRequestInFlight(t *testing.T) {
	t.Helper()
	if err := u.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	if !testbed.Poll(5*time.Second, func() bool { return strings.Contains(u.output(), "upgraded: the new process serves") }) {
		t.Fatalf("no upgrade within 5 s:\n%s", u.output())
	}
	if u.exited(0) {
		t.Fatal("the old process exited with a request in flight")
	}
}

// alive reports whether pid runs (a zombie, reaped by nobody here, does
// not).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil && testbed.ProcState(pid) != "Z"
}

// freshConnLoad GETs url on a new connection each time until stop is
// closed, and counts the answers and the failures (a refused or reset
// connection, an error status).
func freshConnLoad(url string, stop <-chan struct{}, ok, failed *atomic.Int64, errs *sync.Map) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		select {
		case <-stop:
			return
		default:
		}
		resp, err := c.Get(url)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		if err != nil {
			failed.Add(1)
			errs.Store(err.Error(), true)
			continue
		}
		ok.Add(1)
	}
}

func TestUpgradeHandsOverListenersUnderLoadWithoutALostRequest(t *testing.T) {
	o := startOrigin(t)
	u := startUpgradable(t, "--origin", o.URL)
	page := u.url + "/e/handover?" + hq("Cache-Control: max-age=600")
	mustMissStored(t, get(t, newClient(t), page), "priming GET")
	oldPid := u.cmd.Process.Pid

	stop := make(chan struct{})
	var ok, failed atomic.Int64
	var errs sync.Map
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); freshConnLoad(page, stop, &ok, &failed, &errs) }()
	signalled := make(chan struct{})
	go func() {
		time.Sleep(700 * time.Millisecond)        // pacing: the load runs on both sides of the signal
		_ = u.cmd.Process.Signal(syscall.SIGUSR2) // the old process's exit is checked below
		close(signalled)
	}()
	// wrk keeps its connections alive and counts every refused, reset or
	// closed-under-it connection; it retries nothing.
	res := testbed.Wrk(t, page, 4, 3*time.Second)
	close(stop)
	wg.Wait()
	<-signalled

	if !u.exited(15 * time.Second) {
		t.Fatalf("the old process %d still runs 15 s after SIGUSR2", oldPid)
	}
	if code := u.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the old process exited with status %d, want 0", code)
	}
	newPid := u.healthPid()
	if newPid == 0 || newPid == oldPid {
		t.Fatalf("/healthz answered by pid %d after the upgrade, want a new process (old %d)", newPid, oldPid)
	}
	if res.SocketErrors != 0 || res.Errors != 0 || res.Requests == 0 {
		t.Errorf("wrk across the upgrade: %d requests, %d socket errors, %d error statuses; want none failed\n%s",
			res.Requests, res.SocketErrors, res.Errors, res.Output)
	}
	if failed.Load() != 0 || ok.Load() == 0 {
		var list []string
		errs.Range(func(k, _ any) bool { list = append(list, k.(string)); return true })
		t.Errorf("new connections across the upgrade: %d answered, %d failed: %s", ok.Load(), failed.Load(), strings.Join(list, "; "))
	}
	t.Logf("across the upgrade: wrk %d requests, %d socket errors; new connections %d answered, %d failed",
		res.Requests, res.SocketErrors, ok.Load(), failed.Load())
	mustStatus(t, get(t, newClient(t), page), http.StatusOK, "GET from the new process")
}

func TestUpgradeToABinaryThatFailsKeepsTheOldOneServing(t *testing.T) {
	o := startOrigin(t)
	u := startUpgradable(t, "--origin", o.URL)
	page := u.url + "/e/handover-fails?" + hq("Cache-Control: max-age=600")
	c := newClient(t)
	mustMissStored(t, get(t, c, page), "priming GET")

	u.replaceBinary(t, []byte("#!/bin/sh\necho 'broken build' >&2\nexit 1\n"))
	if err := u.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	if !testbed.Poll(15*time.Second, func() bool { return strings.Contains(u.output(), "upgrade failed") }) {
		t.Fatalf("no \"upgrade failed\" logged within 15 s")
	}
	if u.exited(0) {
		t.Fatalf("the old process exited after a failed upgrade")
	}
	if pid := u.healthPid(); pid != u.cmd.Process.Pid {
		t.Fatalf("/healthz answered by pid %d, want the old process %d", pid, u.cmd.Process.Pid)
	}
	mustFreshHit(t, get(t, c, page), "GET after the failed upgrade")
	for _, want := range []string{"broken build", "exit status 1"} {
		if !strings.Contains(u.output(), want) {
			t.Errorf("the log does not say why (%q):\n%s", want, u.output())
		}
	}
}

// TestUpgradeOpensTheListenersTheConfigNowNames: a listener added to
// the file (a setting that needs a restart) serves after the upgrade,
// the ones kept serve on.
func TestUpgradeOpensTheListenersTheConfigNowNames(t *testing.T) {
	o := startOrigin(t)
	dir := t.TempDir()
	path := testbed.WriteConfig(t, dir, "log:\n  level: info\n")
	u := startUpgradable(t, "--origin", o.URL, "--config", path)
	h2c := fmt.Sprintf("127.0.0.1:%d", testbed.FreePorts(t, 1)[0])
	testbed.WriteConfig(t, dir, "log:\n  level: info\nh2c:\n  listen: "+h2c+"\n")
	c := newClient(t)
	if _, err := tryDo(c, http.MethodGet, "http://"+h2c+"/e/h2c", nil); err == nil {
		t.Fatalf("h2c listener %s serves before the upgrade", h2c)
	}
	if err := u.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	if !u.exited(15 * time.Second) {
		t.Fatalf("the old process still runs 15 s after SIGUSR2")
	}
	mustStatus(t, get(t, c, "http://"+h2c+"/e/h2c"), http.StatusOK, "GET on the h2c listener added")
	mustStatus(t, get(t, c, u.url+"/e/main"), http.StatusOK, "GET on the main listener kept")
}

// TestSocketActivatedRamjetServesTheConnectionThatStartedIt: systemd's
// socket activation (here its systemd-socket-activate) holds the socket
// and starts ramjet on the first connection; ramjet takes the socket by
// its address, and the connection waiting in its queue is answered.
func TestSocketActivatedRamjetServesTheConnectionThatStartedIt(t *testing.T) {
	activate, err := exec.LookPath("systemd-socket-activate")
	if err != nil {
		t.Fatalf("systemd-socket-activate not found (Debian package systemd): %v", err)
	}
	o := startOrigin(t)
	u := runUpgradable(t, func(addr string) []string {
		return []string{activate, "--listen=" + addr, "--fdname=web"}
	}, "--origin", o.URL)
	if !testbed.Poll(10*time.Second, func() bool { return strings.Contains(u.output(), "Listening on") }) {
		t.Fatalf("systemd-socket-activate does not listen:\n%s", u.output())
	}
	r, err := tryDo(newClient(t), http.MethodGet, u.url+"/e/activated", nil)
	if err != nil {
		t.Fatalf("the first connection, which started ramjet: %v\n%s", err, u.output())
	}
	mustStatus(t, r, http.StatusOK, "the first GET, which started ramjet")
	if pid := u.healthPid(); pid != u.cmd.Process.Pid {
		t.Fatalf("/healthz answered by pid %d, want the activated process %d", pid, u.cmd.Process.Pid)
	}
}

// TestUpgradeHandsOverTheTLSListenerAndTheHTTP3Socket: HTTPS (h2) and
// HTTP/3 answer on the same ports from the new process after the
// upgrade, which took the TCP listener and the UDP socket over.
func TestUpgradeHandsOverTheTLSListenerAndTheHTTP3Socket(t *testing.T) {
	o := startOrigin(t)
	p := newPKI(t)
	tlsAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	u := startUpgradable(t, "--origin", o.URL, "--tls-listen", tlsAddr, "--tls-cert", p.cert, "--tls-key", p.key, "--http3")
	_, port, _ := net.SplitHostPort(tlsAddr)
	rj := &tlsRamjet{TLSAddr: tlsAddr, Port: port, pki: p}
	page := rj.HTTPS("localhost", "/e/handover-tls?"+hq("Cache-Control: max-age=600"))
	mustStatus(t, get(t, rj.client(t, "h2"), page), http.StatusOK, "h2 before the upgrade")
	mustStatus(t, get(t, rj.h3Client(t, nil), page), http.StatusOK, "h3 before the upgrade")

	oldPid := u.cmd.Process.Pid
	if err := u.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	if !u.exited(15 * time.Second) {
		t.Fatalf("the old process still runs 15 s after SIGUSR2")
	}
	if pid := u.healthPid(); pid == 0 || pid == oldPid {
		t.Fatalf("/healthz answered by pid %d after the upgrade, want a new process (old %d)", pid, oldPid)
	}
	mustStatus(t, get(t, rj.client(t, "h2"), page), http.StatusOK, "h2 after the upgrade")
	mustStatus(t, get(t, rj.h3Client(t, nil), page), http.StatusOK, "h3 after the upgrade")
}

// TestUpgradeFinishesTheRequestInFlight: a request the origin is slow
// to answer when SIGUSR2 comes is answered whole by the old process,
// which exits only after it.
func TestUpgradeFinishesTheRequestInFlight(t *testing.T) {
	o := startOrigin(t)
	u := startUpgradable(t, "--origin", o.URL)
	type outcome struct {
		r   result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := tryDo(newClient(t), http.MethodGet, u.url+"/e/handover-slow?mark=handover-slow&sleep_ms=2500", nil)
		done <- outcome{r, err}
	}()
	if !testbed.Poll(5*time.Second, func() bool { return o.marked("handover-slow") }) {
		t.Fatal("the slow request never reached the origin")
	}
	u.upgradeWithRequestInFlight(t)
	got := <-done
	if got.err != nil {
		t.Fatalf("the request in flight failed across the upgrade: %v", got.err)
	}
	mustStatus(t, got.r, http.StatusOK, "the request in flight")
	if got.r.ID() == "" {
		t.Errorf("its body is incomplete: %.200q", got.r.Body)
	}
	if !u.exited(10 * time.Second) {
		t.Fatalf("the old process still runs 10 s after its last request")
	}
}
