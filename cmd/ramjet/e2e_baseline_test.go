package main_test

// End-to-end tests of what ramjet holds before its first connection
// (issue 33, docs/connections.md "What ramjet holds before its first
// connection"): what a site does not use is not built (the WAF's rule
// set, HTTP/3's UDP socket and QUIC transport), and ramjet's own package
// initialisers stay small, since every process runs them whatever its
// configuration.

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestWAFRuleSetIsBuiltForTheSiteThatTurnsItOn: with no site's WAF on,
// no rule set is compiled; the reload that turns one site's WAF on
// builds it, and that site blocks an attack the other site lets through.
func TestWAFRuleSetIsBuiltForTheSiteThatTurnsItOn(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	dir := t.TempDir()
	cfg := func(mode string) string {
		return fmt.Sprintf("hosts:\n  - names: [guarded.test]\n    waf:\n      mode: %s\n  - names: [open.test]\n", mode)
	}
	path := testbed.WriteConfig(t, dir, cfg("off"))
	rj := startRamjet(t, o.URL, "--config", path)
	c, ns := newClient(t), nsFor(t)
	sqli := attacks[0]
	sets := func() float64 {
		t.Helper()
		n, ok := metric(t, c, rj, "ramjet_waf_rule_sets")
		if !ok {
			t.Fatal("/metrics lacks ramjet_waf_rule_sets")
		}
		return n
	}
	send := func(host string) int {
		t.Helper()
		a := sqli
		a.hdr = append([]string{"Host: " + host}, a.hdr...)
		return a.send(t, c, rj.URL, ns).Status
	}
	if n := sets(); n != 0 {
		t.Fatalf("no site's WAF on: %v rule sets built, want 0", n)
	}
	if s := send("guarded.test"); s != http.StatusOK {
		t.Fatalf("WAF off: %s answered %d, want 200", sqli.name, s)
	}
	from := len(rj.Output())
	testbed.WriteConfig(t, dir, cfg("block"))
	rj.WaitOutput(t, from, "config reloaded", 60*time.Second)
	if n := sets(); n != 1 {
		t.Fatalf("after the reload that turned guarded.test's WAF on: %v rule sets, want 1", n)
	}
	if s := send("guarded.test"); s != http.StatusForbidden {
		t.Errorf("guarded.test with its WAF on: %s answered %d, want 403", sqli.name, s)
	}
	if s := send("open.test"); s != http.StatusOK {
		t.Errorf("open.test, whose WAF stays off: %s answered %d, want 200", sqli.name, s)
	}
}

// TestHTTP3OpensNoUDPSocketUntilTurnedOn: a TLS listener without
// tls.http3 opens no UDP socket and advertises no HTTP/3; the upgrade
// (SIGUSR2) after the config turned it on opens the socket, and a
// request over HTTP/3 is answered.
func TestHTTP3OpensNoUDPSocketUntilTurnedOn(t *testing.T) {
	o := startOrigin(t)
	p := newPKI(t)
	tlsAddr := fmt.Sprintf("127.0.0.1:%d", testbed.FreePort(t))
	dir := t.TempDir()
	cfg := func(h3 bool) string {
		return fmt.Sprintf("tls:\n  listen: %q\n  cert: %q\n  key: %q\n  http3: %t\n", tlsAddr, p.cert, p.key, h3)
	}
	u := startUpgradable(t, "--origin", o.URL, "--config", testbed.WriteConfig(t, dir, cfg(false)))
	_, port, _ := net.SplitHostPort(tlsAddr)
	rj := &tlsRamjet{TLSAddr: tlsAddr, Port: port, pki: p}
	page := rj.HTTPS("localhost", "/e/"+nsFor(t)+"/h3-lazy?"+hq("Cache-Control: max-age=60"))

	if r := get(t, rj.client(t, "h2"), page); r.Status != http.StatusOK || r.Header.Get("Alt-Svc") != "" {
		t.Fatalf("HTTP/3 off: status %d, Alt-Svc %q; want 200 and none", r.Status, r.Header.Get("Alt-Svc"))
	}
	if n := udpSockets(t, u.cmd.Process.Pid); n != 0 {
		t.Errorf("HTTP/3 off: %d UDP sockets open, want 0", n)
	}

	testbed.WriteConfig(t, dir, cfg(true))
	oldPid := u.cmd.Process.Pid
	if err := u.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	if !u.exited(15 * time.Second) {
		t.Fatalf("the old process still runs 15 s after SIGUSR2:\n%s", u.output())
	}
	pid := u.healthPid()
	if pid == 0 || pid == oldPid {
		t.Fatalf("/healthz answered by pid %d after the upgrade, want a new process (old %d)", pid, oldPid)
	}
	if n := udpSockets(t, pid); n != 1 {
		t.Errorf("HTTP/3 on: %d UDP sockets open, want 1", n)
	}
	if r := protoGet(t, rj.h3Client(t, nil), 3, page); r.Status != http.StatusOK {
		t.Fatalf("HTTP/3 on: status %d over h3, want 200", r.Status)
	}
}

// udpSockets counts the UDP sockets among pid's open descriptors, by the
// inodes of its network namespace's UDP tables.
func udpSockets(t testing.TB, pid int) int {
	t.Helper()
	udp := map[string]bool{}
	for _, table := range []string{"udp", "udp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if f := strings.Fields(line); len(f) > 9 {
				udp["socket:["+f[9]+"]"] = true
			}
		}
	}
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && udp[target] {
			n++
		}
	}
	return n
}

// TestBinaryLinksNoProtobuf: Coraza's OCSF audit types come from
// third_party/ocsf-schema-golang, plain structs; linking the protobuf
// runtime again costs every process megabytes before its first request.
func TestBinaryLinksNoProtobuf(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "version", "-m", testbed.Binary(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "google.golang.org/protobuf") {
		t.Errorf("the binary links google.golang.org/protobuf:\n%s", out)
	}
	if !strings.Contains(string(out), "=>\t./third_party/ocsf-schema-golang\t") {
		t.Errorf("github.com/valllabh/ocsf-schema-golang is not replaced by ./third_party/ocsf-schema-golang:\n%s", out)
	}
}

// ownInitBudget bounds what ramjet's own package initialisers allocate
// in every process (36 KB measured, 2026-12-05): a package-level regexp
// or table that only a subcommand or an option needs belongs behind a
// sync.OnceValue, built on first use.
const ownInitBudget = 48 << 10

// TestOwnPackageInitialisersAllocateLittle runs the binary with
// GODEBUG=inittrace=1 and sums what ramjet's own packages allocate
// before main.
func TestOwnPackageInitialisersAllocateLittle(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(testbed.Binary(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ramjet version: %v\n%s", err, out)
	}
	type initCost struct {
		pkg   string
		bytes int
	}
	var own []initCost
	total := 0
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, D ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		if strings.HasPrefix(f[1], "github.com/ramjet-proxy/ramjet") {
			own = append(own, initCost{f[1], b})
			total += b
		}
	}
	if len(own) == 0 {
		t.Fatalf("no inittrace line of ramjet's packages in:\n%s", out)
	}
	sort.Slice(own, func(i, j int) bool { return own[i].bytes > own[j].bytes })
	if total > ownInitBudget {
		t.Errorf("ramjet's package initialisers allocate %d bytes, over the budget of %d; the largest: %v", total, ownInitBudget, own[:min(5, len(own))])
	}
}
