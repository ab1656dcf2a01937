package deb

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"golang.org/x/sys/unix"
)

// adoptSites are the box's nginx sites, on nginx's usual listen 80;
// listen [::]:80;.
const adoptSites = 3

// TestAdoptUnderSystemdServesAsThePackagesUnit installs the package in
// the box (its ramjet.service runs, enabled, with the shipped config),
// runs an nginx there on its usual `listen 80; listen [::]:80;` and has
// `ramjet adopt nginx --apply` put ramjet in front under load on
// 127.0.0.1 and [::1]: the process serving :80 afterwards is
// ramjet.service's main process, on systemd's sockets (ramjet.socket:
// 0.0.0.0:80 and [::]:80, IPv6 only), reading /etc/ramjet/ramjet.yaml
// (the shipped one kept in the backup), enabled; no request fails.
// `ramjet adopt --rollback` under load puts nginx back on :80, removes
// the socket unit and restores the unit's configuration, enablement and
// running state.
//
// It runs on demand (RAMJET_BOX_ADOPT=1), not in make test: in make
// test's full run its box's systemd went away after the switch once in
// three runs (nsenter: the box's init no longer exists), a failure of
// the box under load that is not understood yet; alone it passes.
func TestAdoptUnderSystemdServesAsThePackagesUnit(t *testing.T) {
	if os.Getenv("RAMJET_BOX_ADOPT") == "" {
		t.Skip("on demand: RAMJET_BOX_ADOPT=1 go test -run TestAdoptUnderSystemd ./deb/ (its box is not yet reliable under make test's load)")
	}
	if os.Geteuid() != 0 {
		testbed.Skip(t, "needs root: deb/box (see TestPackageInstallsServesReloadsAndRemoves)")
	}
	for _, tool := range []string{"dpkg-deb", "dpkg-shlibdeps", "unshare", "nsenter", "setpriv", "curl", "/lib/systemd/systemd", "adduser", "pgrep", "/usr/sbin/nginx"} {
		if _, err := exec.LookPath(tool); err != nil {
			testbed.Skipf(t, "%s not found (.ci/deps installs it)", tool)
		}
	}
	dir := t.TempDir()
	share := filepath.Join(dir, "share")
	if err := os.Mkdir(share, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := buildPackage(t, testbed.Binary(t), share)
	b := startBox(t, dir)
	b.must(t, "rm", "-f", "/usr/sbin/policy-rc.d")
	b.must(t, "dpkg", "-i", "/run/box-share/"+filepath.Base(pkg))
	shipped := b.must(t, "cat", config)
	// What adopt does on a host (it writes the sysctl itself): the box's
	// /proc/sys is read-only inside, so it is set from here in the box's
	// network namespace.
	if out, err := exec.Command("nsenter", "-t", strconv.Itoa(b.init), "-n", "sh", "-c", "echo 1 >/proc/sys/net/ipv4/tcp_migrate_req").CombinedOutput(); err != nil {
		t.Fatalf("tcp_migrate_req in the box: %v\n%s", err, out)
	}
	startBoxNginx(t, b)

	load := startBoxLoad(t, b.init, 4)
	waitLoad(t, load, "nginx")
	out, err := b.run("ramjet", "adopt", "nginx", "--conf", "/etc/nginx-adopt/nginx.conf", "--php-pools", "/nonexistent/*.conf", "--apply")
	t.Logf("adopt --apply:\n%s", out)
	if err != nil {
		load.end()
		j, _ := b.run("journalctl", "--no-pager", "-n", "40", "-o", "cat", "-u", "ramjet")
		t.Fatalf("adopt --apply: %v; ramjet's journal:\n%s", err, j)
	}
	waitLoad(t, load, "ramjet")
	ok, failed, fails := load.end()
	t.Logf("switch under load: %d answered (%d by nginx, %d by ramjet), %d failed", ok, load.nginx.Load(), load.ramjet.Load(), failed)
	if failed > 0 {
		t.Fatalf("%d requests failed during the switch:\n%s", failed, strings.Join(fails[:min(10, len(fails))], "\n"))
	}
	// systemctl show failed once (exit 1, no output kept) right after
	// the switch: asked again until it answers.
	var pid int
	testbed.Poll(waitFor, func() bool {
		out, err := b.run("systemctl", "show", "-p", "MainPID", "--value", "ramjet")
		pid, _ = strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Logf("systemctl show -p MainPID ramjet: %v %q", err, out)
		}
		return err == nil && pid != 0
	})
	if got := strings.Fields(b.must(t, "pgrep", "-x", "ramjet")); len(got) != 1 || got[0] != strconv.Itoa(pid) {
		t.Fatalf("ramjet processes %v, want only ramjet.service's main process %d", got, pid)
	}
	if got := b.must(t, "systemctl", "show", "-p", "Listen", "-p", "BindIPv6Only", "-p", "ReusePort", "ramjet.socket"); got != "BindIPv6Only=ipv6-only\nListen=0.0.0.0:80 (Stream)\nListen=[::]:80 (Stream)\nReusePort=yes\n" {
		t.Errorf("ramjet.socket: %q, want nginx's two sockets, IPv6 only, with SO_REUSEPORT", got)
	}
	if got := b.must(t, "systemctl", "is-enabled", "ramjet.service", "ramjet.socket"); got != "enabled\nenabled\n" {
		t.Errorf("after --apply, is-enabled ramjet.service ramjet.socket: %q", got)
	}
	if got := b.must(t, "cat", config); !strings.Contains(got, "written by `ramjet adopt`") || !strings.Contains(got, "s02.test") {
		t.Errorf("%s after --apply:\n%s", config, got)
	}
	if got := b.must(t, "cat", "/var/lib/ramjet/adopt/ramjet.yaml.before"); got != shipped {
		t.Errorf("the backup of the shipped config: %q", got)
	}
	if got := b.must(t, "stat", "-c", "%U:%G %a", config); got != "root:ramjet 640\n" {
		t.Errorf("%s is %s, want root:ramjet 640", config, got)
	}

	load = startBoxLoad(t, b.init, 4)
	waitLoad(t, load, "ramjet")
	out, err = b.run("ramjet", "adopt", "--rollback")
	t.Logf("adopt --rollback:\n%s", out)
	if err != nil {
		load.end()
		t.Fatalf("adopt --rollback: %v", err)
	}
	waitLoad(t, load, "nginx")
	ok, failed, fails = load.end()
	t.Logf("rollback under load: %d answered (%d by nginx, %d by ramjet), %d failed", ok, load.nginx.Load(), load.ramjet.Load(), failed)
	// A connection ramjet.service accepted as it drained used to be closed
	// unanswered (1 request in ~2,000 in 2 of ~10 runs); a stop now answers
	// the connections that had sent nothing yet (proxy/conns/drain.go).
	if failed > 0 {
		t.Fatalf("%d requests failed during the rollback:\n%s", failed, strings.Join(fails[:min(10, len(fails))], "\n"))
	}
	if got := b.must(t, "cat", config); got != shipped {
		t.Errorf("%s after --rollback is not the shipped one:\n%s", config, got)
	}
	if _, err := b.run("test", "-e", "/etc/systemd/system/ramjet.socket"); err == nil {
		t.Errorf("ramjet.socket is left after --rollback")
	}
	if got, _ := b.run("systemctl", "is-active", "ramjet.service"); got != "active\n" {
		t.Errorf("ramjet.service after --rollback: %q, want active as it was", got)
	}
	if got, _ := b.run("systemctl", "is-enabled", "ramjet.service"); got != "enabled\n" {
		t.Errorf("ramjet.service after --rollback: %q, want enabled as it was", got)
	}
	// A unit stopped since --apply: the rollback lets systemd's sockets
	// go before nginx binds :80 alone again.
	b.must(t, "ramjet", "adopt", "nginx", "--conf", "/etc/nginx-adopt/nginx.conf", "--php-pools", "/nonexistent/*.conf", "--apply")
	b.must(t, "systemctl", "stop", "ramjet.service")
	if out, err := b.run("ramjet", "adopt", "--rollback"); err != nil {
		t.Fatalf("adopt --rollback of a stopped unit: %v\n%s", err, out)
	}
	if out, _ := b.run("curl", "-sS", "-H", "Host: s02.test", "http://[::1]/"); out != "home of s02.test\n" {
		t.Fatalf("nginx after the rollback of a stopped unit: %q", out)
	}

	// The shipped config again: :8080 (its origin, 127.0.0.1:8081, is
	// nginx's no longer, so ramjet answers 502 there).
	if code, _ := b.run("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", site+"/"); code != "502" && code != "200" {
		t.Errorf("ramjet.service after --rollback does not answer on the shipped config's %s: %q", site, code)
	}
}

// startBoxNginx runs nginx in the box as a unit of its own, with
// adoptSites name-based sites on 127.0.0.1:80.
func startBoxNginx(t *testing.T, b *box) {
	t.Helper()
	b.sh(t, "mkdir -p /etc/nginx-adopt/sites-enabled /tmp/nginx-adopt")
	b.write(t, "/etc/nginx-adopt/nginx.conf", `pid /run/nginx-adopt.pid;
error_log /var/log/nginx-adopt.log warn;
worker_processes 2;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path /tmp/nginx-adopt;
	proxy_temp_path /tmp/nginx-adopt;
	fastcgi_temp_path /tmp/nginx-adopt;
	uwsgi_temp_path /tmp/nginx-adopt;
	scgi_temp_path /tmp/nginx-adopt;
	default_type text/plain;
	include /etc/nginx-adopt/sites-enabled/*.conf;
}
`)
	for i := 1; i <= adoptSites; i++ {
		n := fmt.Sprintf("s%02d.test", i)
		b.sh(t, fmt.Sprintf("mkdir -p /srv/www/%[1]s && echo 'home of %[1]s' >/srv/www/%[1]s/index.html", n))
		b.write(t, "/etc/nginx-adopt/sites-enabled/"+n+".conf", fmt.Sprintf("server {\n\tlisten 80;\n\tlisten [::]:80;\n\tserver_name %[1]s www.%[1]s;\n\troot /srv/www/%[1]s;\n}\n", n))
	}
	b.must(t, "systemd-run", "--unit=web", "--quiet", "/usr/sbin/nginx", "-c", "/etc/nginx-adopt/nginx.conf", "-g", "daemon off;")
	if !testbed.Poll(waitFor, func() bool {
		out, _ := b.run("curl", "-sS", "-H", "Host: s01.test", "http://127.0.0.1/")
		return out == "home of s01.test\n"
	}) {
		status, _ := b.run("systemctl", "status", "web", "--no-pager")
		t.Fatalf("the box's nginx does not serve s01.test:\n%s", status)
	}
}

// boxLoad requests the box's sites from inside its network namespace:
// each worker is a thread that entered it.
type boxLoad struct {
	stop          chan struct{}
	wg            sync.WaitGroup
	ok, failed    atomic.Int64
	nginx, ramjet atomic.Int64 // answers by each (ramjet's carry Cache-Status)
	mu            sync.Mutex
	failures      []string
}

func startBoxLoad(t *testing.T, init, workers int) *boxLoad {
	t.Helper()
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", init))
	if err != nil {
		t.Fatal(err)
	}
	l := &boxLoad{stop: make(chan struct{})}
	entered := make(chan error, workers)
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			// The thread stays in the box's namespace and ends with the
			// goroutine (never unlocked).
			runtime.LockOSThread()
			err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET)
			entered <- err
			if err != nil {
				return
			}
			for i := w; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.request([]string{"127.0.0.1:80", "[::1]:80"}[w%2], fmt.Sprintf("s%02d.test", i%adoptSites+1))
				time.Sleep(time.Millisecond) // a load, not a benchmark: the machine is shared
			}
		}()
	}
	for range workers {
		if err := <-entered; err != nil {
			t.Fatalf("enter the box's network namespace: %v", err)
		}
	}
	_ = ns.Close() // every worker entered
	return l
}

// request asks addr for a site's home page on a new connection,
// from this thread (the socket is made in its namespace).
func (l *boxLoad) request(addr, site string) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err == nil {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		_, err = fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", site)
	}
	var resp *http.Response
	var body []byte
	if err == nil {
		if resp, err = http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			body = make([]byte, 64)
			n, _ := resp.Body.Read(body)
			body = body[:n]
		}
	}
	if err == nil && resp.StatusCode == 200 && string(body) == "home of "+site+"\n" {
		l.ok.Add(1)
		if resp.Header.Get("Cache-Status") != "" {
			l.ramjet.Add(1)
		} else {
			l.nginx.Add(1)
		}
		return
	}
	l.failed.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if resp != nil {
		err = fmt.Errorf("%d %q", resp.StatusCode, body)
	}
	l.failures = append(l.failures, fmt.Sprintf("%s %s: %v", addr, site, err))
}

// waitLoad waits until the load has had an answer from who ("nginx" or
// "ramjet") since the call.
func waitLoad(t *testing.T, l *boxLoad, who string) {
	t.Helper()
	n := &l.nginx
	if who == "ramjet" {
		n = &l.ramjet
	}
	from := n.Load()
	if !testbed.Poll(waitFor, func() bool { return n.Load() > from+20 }) {
		t.Fatalf("the load had no answers from %s (%d ok, %d failed)", who, l.ok.Load(), l.failed.Load())
	}
}

func (l *boxLoad) end() (ok, failed int64, failures []string) {
	close(l.stop)
	l.wg.Wait()
	return l.ok.Load(), l.failed.Load(), l.failures
}
