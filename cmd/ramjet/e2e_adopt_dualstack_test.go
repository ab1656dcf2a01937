package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"gopkg.in/yaml.v3"
)

// TestAdoptNginxOnIPv4AndIPv6LoopbackMovesEveryQueuedConnection adopts
// an nginx whose sites listen on 127.0.0.1:P and [::1]:P under load on
// both: ramjet takes both addresses on sockets of their own (listen as
// a list), so that the connections queued on each of nginx's sockets
// move to ramjet's of the same address and family when nginx lets go of
// it; no request fails, and the rollback gives both back.
func TestAdoptNginxOnIPv4AndIPv6LoopbackMovesEveryQueuedConnection(t *testing.T) {
	adoptTwoFamilies(t, "127.0.0.1:%d", "[::1]:%d", `"127.0.0.1:%[1]d", "[::1]:%[1]d"`)
}

// TestAdoptNginxListeningOnBothWildcardsMovesEveryQueuedConnection is
// the same with nginx's usual `listen P; listen [::]:P;`: two sockets,
// IPv4 and IPv6 only, which ramjet binds alike (0.0.0.0:P and [::]:P)
// instead of one dual-stack socket, whose group nginx's IPv4 socket
// cannot hand its queue to.
func TestAdoptNginxListeningOnBothWildcardsMovesEveryQueuedConnection(t *testing.T) {
	adoptTwoFamilies(t, "%d", "[::]:%d", `"0.0.0.0:%[1]d", "[::]:%[1]d"`)
}

// adoptTwoFamilies adopts an nginx whose 3 sites listen on v4 and v6
// (formats of the port) under load on 127.0.0.1 and [::1]; ramjet's
// listen must be the list want (a format of the port).
func adoptTwoFamilies(t *testing.T, v4, v6, want string) {
	ports := testbed.FreePorts(t, 3)
	h := &adoptHost{dir: t.TempDir(), files: map[string]string{},
		plain: fmt.Sprintf("127.0.0.1:%d", ports[0]), origin: fmt.Sprintf("127.0.0.1:%d", ports[1]), admin: fmt.Sprintf("127.0.0.1:%d", ports[2])}
	loop6 := fmt.Sprintf("[::1]:%d", ports[0])
	if ln, err := net.Listen("tcp6", fmt.Sprintf(v6, ports[0])); err != nil {
		t.Skipf("no IPv6: %v", err)
	} else {
		_ = ln.Close() // only whether it binds
	}
	h.conf, h.errorLog = filepath.Join(h.dir, "nginx.conf"), filepath.Join(h.dir, "error.log")
	user := ""
	if os.Geteuid() == 0 {
		user = "user root root;\n"
	}
	h.write(t, "nginx.conf", fmt.Sprintf("%[1]spid %[2]s/nginx.pid;\nerror_log %[3]s warn;\nworker_processes 2;\nevents { worker_connections 1024; }\n"+
		"http {\n\taccess_log off;\n\tclient_body_temp_path %[2]s/tmp;\n\tproxy_temp_path %[2]s/tmp;\n\tfastcgi_temp_path %[2]s/tmp;\n\tuwsgi_temp_path %[2]s/tmp;\n\tscgi_temp_path %[2]s/tmp;\n"+
		"\tdefault_type text/plain;\n\tinclude sites-enabled/*.conf;\n}\n", user, h.dir, h.errorLog))
	var targets []loadTarget
	for i := 1; i <= 3; i++ {
		n := fmt.Sprintf("s%02d.test", i)
		h.site(t, n, n, fmt.Sprintf("server {\n\tlisten %s;\n\tlisten %s;\n\tserver_name %s;\n\troot %s;\n}\n", fmt.Sprintf(v4, ports[0]), fmt.Sprintf(v6, ports[0]), n, h.docroot(t, n)))
		targets = append(targets, loadTarget{"http://" + n + "/", "home of " + n + "\n"})
	}
	h.start(t)
	out := filepath.Join(h.dir, "ramjet.yaml")
	loads := func() []*adoptLoad {
		return []*adoptLoad{startAdoptLoad(h.plain, "", nil, targets, 4), startAdoptLoad(loop6, "", nil, targets, 4)}
	}
	check := func(ls []*adoptLoad, what string) {
		t.Helper()
		for i, l := range ls {
			l.check(t, fmt.Sprintf("%s (%s)", what, []string{"IPv4", "IPv6"}[i]))
		}
	}
	ls := loads()
	time.Sleep(300 * time.Millisecond) // load on nginx alone first
	code, output := h.adopt(t, "--out", out, "--apply")
	if code != 0 {
		check(ls, "failed switch")
		t.Fatalf("adopt --apply exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond) // and on ramjet alone
	check(ls, "switch")
	written, err := os.ReadFile(out)
	var conf struct{ Listen []string }
	if err == nil {
		err = yaml.Unmarshal(written, &conf)
	}
	if err != nil || fmt.Sprintf("%q", conf.Listen) != "["+strings.ReplaceAll(fmt.Sprintf(want, ports[0]), ",", "")+"]" {
		t.Fatalf("ramjet's listen is %q, want [%s] (%v):\n%s", conf.Listen, fmt.Sprintf(want, ports[0]), err, written)
	}
	adoptedRamjet(t, filepath.Join(h.dir, "backup"))
	c := &http.Client{Timeout: 10 * time.Second}
	for _, a := range []string{h.plain, loop6} {
		if r := get(t, c, "http://"+a+"/", "Host: s02.test"); r.Status != 200 || r.Header.Get("Cache-Status") == "" {
			t.Fatalf("after --apply, %s: %d %v (ramjet answers both)", a, r.Status, r.Header)
		}
	}

	ls = loads()
	time.Sleep(300 * time.Millisecond)
	code, output = testbed.RunRamjet(t, 3*time.Minute, "adopt", "--rollback", "--backup", filepath.Join(h.dir, "backup"))
	if code != 0 {
		check(ls, "failed rollback")
		t.Fatalf("adopt --rollback exited %d:\n%s", code, output)
	}
	time.Sleep(300 * time.Millisecond)
	check(ls, "rollback")
	h.unchanged(t)
	for _, a := range []string{h.plain, loop6} {
		if r := get(t, c, "http://"+a+"/", "Host: s02.test"); r.Status != 200 || r.Header.Get("Cache-Status") != "" {
			t.Fatalf("after --rollback, %s: %d %v (nginx answers both)", a, r.Status, r.Header)
		}
	}
}

// TestListenListServesEveryAddressAndHandsThemOn: a ramjet configured
// with listen: ["0.0.0.0:P", "[::]:P"] binds both (IPv4 only, IPv6
// only: Go's "0.0.0.0:P" alone would be dual-stack and take [::]:P too)
// and answers on 127.0.0.1:P and [::1]:P, before and after an upgrade
// (SIGUSR2) hands both sockets on.
func TestListenListServesEveryAddressAndHandsThemOn(t *testing.T) {
	ports := testbed.FreePorts(t, 2)
	if ln, err := net.Listen("tcp6", fmt.Sprintf("[::]:%d", ports[0])); err != nil {
		t.Skipf("no IPv6: %v", err)
	} else {
		_ = ln.Close() // only whether it binds
	}
	dir := t.TempDir()
	admin := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	conf := testbed.WriteConfig(t, dir, fmt.Sprintf("listen: [\"0.0.0.0:%[1]d\", \"[::]:%[1]d\"]\nadmin:\n  listen: \"127.0.0.1:%[2]d\"\norigin:\n  servers: [\"http://127.0.0.1:1\"]\n", ports[0], ports[1]))
	logPath := filepath.Join(dir, "ramjet.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close() // ramjet holds its own
	cmd := exec.Command(testbed.Binary(t), "serve", "--config", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pids := []int{cmd.Process.Pid}
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("ramjet:\n%s", b)
		}
	})
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	serving := func() int {
		var h struct{ Pid int }
		if r, err := c.Get(admin + "/healthz"); err == nil {
			_ = json.NewDecoder(r.Body).Decode(&h)
			_ = r.Body.Close()
		}
		return h.Pid
	}
	answers := func(pid int) {
		t.Helper()
		if !testbed.Poll(10*time.Second, func() bool { return serving() == pid }) {
			t.Fatalf("ramjet %d does not serve", pid)
		}
		for _, a := range []string{fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("[::1]:%d", ports[0])} {
			r, err := c.Get("http://" + a + "/")
			if err != nil {
				t.Fatalf("ramjet %d does not answer on %s: %v", pid, a, err)
			}
			_ = r.Body.Close()
		}
	}
	answers(cmd.Process.Pid)
	if err := cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the old ramjet exited with %v after SIGUSR2", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the old ramjet still runs 30s after SIGUSR2")
	}
	next := serving()
	if next == 0 || next == cmd.Process.Pid {
		t.Fatalf("after SIGUSR2 the admin listener names pid %d", next)
	}
	pids = append(pids, next)
	answers(next)
}
