package main_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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
	needsIPv6(t, fmt.Sprintf(v6, ports[0]))
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
	needsIPv6(t, fmt.Sprintf("[::]:%d", ports[0]))
	u := startUpgradableOn(t, fmt.Sprintf("listen: [\"0.0.0.0:%[1]d\", \"[::]:%[1]d\"]\nadmin:\n  listen: \"127.0.0.1:%[2]d\"\norigin:\n  servers: [\"http://127.0.0.1:1\"]\n", ports[0], ports[1]),
		fmt.Sprintf("http://127.0.0.1:%d", ports[1]))
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	answers := func(pid int) {
		t.Helper()
		if !testbed.Poll(10*time.Second, func() bool { return u.healthPid() == pid }) {
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
	first := u.cmd.Process.Pid
	answers(first)
	if err := u.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	if !u.exited(30 * time.Second) {
		t.Fatal("the old ramjet still runs 30s after SIGUSR2")
	}
	if !u.cmd.ProcessState.Success() {
		t.Fatalf("the old ramjet exited with %v after SIGUSR2", u.cmd.ProcessState)
	}
	next := u.healthPid()
	if next == 0 || next == first {
		t.Fatalf("after SIGUSR2 the admin listener names pid %d", next)
	}
	answers(next)
}

// TestUpgradesOfAListenListUnderAFloodOfNewConnectionsLoseNone: ramjet
// on 127.0.0.1:P and [::1]:P (a listen list: one socket and one accept
// goroutine each) is upgraded 20 times while 16 clients open a new
// connection for every request on both. Each old process hands its
// sockets on and closes them; a connection one of its goroutines had
// accepted but not yet handed to the server is served all the same, not
// closed under its request (which no client retries: the connection
// never answered before).
func TestUpgradesOfAListenListUnderAFloodOfNewConnectionsLoseNone(t *testing.T) {
	ports := testbed.FreePorts(t, 2)
	needsIPv6(t, fmt.Sprintf("[::1]:%d", ports[0]))
	o := startOrigin(t)
	u := startUpgradableOn(t, fmt.Sprintf("listen: [\"127.0.0.1:%[1]d\", \"[::1]:%[1]d\"]\nadmin:\n  listen: \"127.0.0.1:%[2]d\"\norigin:\n  servers: [%[3]q]\n", ports[0], ports[1], o.URL),
		fmt.Sprintf("http://127.0.0.1:%d", ports[1]))
	path := "/e/listlist?" + hq("Cache-Control: max-age=600")
	var pages []string
	for _, a := range []string{fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("[::1]:%d", ports[0])} {
		pages = append(pages, "http://"+a+path)
	}
	mustMissStored(t, get(t, newClient(t), pages[0]), "priming GET")

	const upgrades = 20
	stop := make(chan struct{})
	var ok, failed atomic.Int64
	var errs sync.Map
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() { defer wg.Done(); freshConnLoad(pages[i%2], stop, &ok, &failed, &errs) }()
	}
	for range upgrades {
		old := u.healthPid()
		if old == 0 { // never kill(0, …): that signals this test's own process group
			close(stop)
			wg.Wait()
			t.Fatal("the admin listener names no process")
		}
		if err := syscall.Kill(old, syscall.SIGUSR2); err != nil {
			t.Fatal(err)
		}
		if !testbed.Poll(30*time.Second, func() bool { n := u.healthPid(); return n != 0 && n != old && !alive(old) }) {
			close(stop)
			wg.Wait()
			t.Fatalf("ramjet %d not replaced within 30 s of SIGUSR2", old)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("across %d upgrades: %d new connections answered, %d failed", upgrades, ok.Load(), failed.Load())
	if failed.Load() != 0 || ok.Load() == 0 {
		var list []string
		errs.Range(func(k, _ any) bool { list = append(list, k.(string)); return true })
		t.Fatalf("new connections across the upgrades: %d answered, %d failed: %s", ok.Load(), failed.Load(), strings.Join(list, "; "))
	}
}

// needsIPv6 skips t unless IPv6 address addr can be bound.
func needsIPv6(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp6", addr)
	if err != nil {
		t.Skipf("no IPv6: %v", err)
	}
	_ = ln.Close() // only whether it binds
}

// startUpgradableOn starts an upgradable ramjet on config, which names
// its own listeners (a listen list), admin being its admin listener's
// URL, and returns once it serves.
func startUpgradableOn(t *testing.T, config, admin string) *upgradable {
	t.Helper()
	u := newUpgradable(t, admin)
	u.run(t, []string{u.bin, "serve", "--config", testbed.WriteConfig(t, filepath.Dir(u.bin), config)})
	if !testbed.Poll(10*time.Second, func() bool { return u.healthPid() == u.cmd.Process.Pid }) {
		t.Fatalf("ramjet not serving within 10 s:\n%s", u.output())
	}
	return u
}
