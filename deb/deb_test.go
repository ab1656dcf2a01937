package deb

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }

const (
	config    = "/etc/ramjet/ramjet.yaml"
	site      = "http://127.0.0.1:8080" // the embedded default listen
	unitCaps  = "00000000000804e5"      // the unit's AmbientCapabilities (CAP_NET_BIND_SERVICE, then docroot mode's), as /proc/PID/status prints them
	waitFor   = 30 * time.Second        // for a start, a reload, a journal line
	wantShell = "/usr/sbin/nologin"
)

// TestPackageInstallsServesReloadsAndRemoves builds the .deb the way make
// deb does and takes it through an admin's life with it under a real
// systemd: dpkg -i (user, files, enabled and started with the shipped
// config), requests through it to an origin on the default origin
// address, a purge, reloads with a good and a bad edit, :80, logrotate,
// docroot mode as shipped and with the root drop-in, an upgrade, stop,
// dpkg -r and dpkg -P.
func TestPackageInstallsServesReloadsAndRemoves(t *testing.T) {
	if os.Geteuid() != 0 {
		testbed.Skip(t, "needs root: the package is installed with dpkg -i inside deb/box, a systemd in namespaces on an overlay mount, which only root can make (CI runs as root)")
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		testbed.Skip(t, "no dpkg-deb: not a Debian system, so no Debian package to build and install")
	}
	for _, tool := range []string{"dpkg-shlibdeps", "strip", "unshare", "nsenter", "setpriv", "curl", "logrotate", "php-cgi", "/lib/systemd/systemd", "adduser", "pgrep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: install Debian's dpkg-dev, binutils, util-linux, curl, logrotate, php-cgi, systemd, adduser and procps (.ci/deps does)", tool)
		}
	}
	dir := t.TempDir()
	share := filepath.Join(dir, "share")
	if err := os.Mkdir(share, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := buildPackage(t, testbed.Binary(t), share)
	lintPackage(t, pkg)
	buildOrigin(t, share)

	b := startBox(t, dir)
	// This machine's image forbids maintainer scripts to start services (a
	// Docker-style /usr/sbin/policy-rc.d that exits 101, owned by no
	// package); a Debian installed as usual has none.
	b.must(t, "rm", "-f", "/usr/sbin/policy-rc.d")
	b.must(t, "systemd-run", "--unit=origin", "--quiet", "/run/box-share/demo-origin", "-listen", "127.0.0.1:8081")
	b.must(t, "dpkg", "-i", "/run/box-share/"+filepath.Base(pkg))

	steps := []struct {
		name string
		f    func(*testing.T, *box)
	}{
		{"InstallMakesUserFilesAndStartsIt", checkInstalled},
		{"ManPagesShowWithMan", checkManPages},
		{"ServesCachesAndPurges", checkServes},
		{"ReloadChecksFirstAndKeepsRunningConfig", checkReload},
		{"BindsPort80AsRamjetUser", checkPort80},
		{"LogrotateRotatesAndSignalsWithoutKilling", checkLogrotate},
		{"DocrootWorkersRunAsTheSitesUserWithoutCapabilities", checkDocroot},
		{"UpgradeKeepsEditedConfigAndHandsOver", func(t *testing.T, b *box) { checkUpgrade(t, b, pkg) }},
		{"StopDrainsAndStartServesAgain", checkStop},
		{"RemoveStopsAndKeepsConfig", checkRemove},
		{"PurgeRemovesConfigLogsAndUser", checkPurge},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.f(t, b) }) {
			out, _ := b.run("journalctl", "--no-pager", "-n", "60", "-u", "ramjet")
			t.Fatalf("stopping after %s; the box's journal for ramjet:\n%s", s.name, out)
		}
	}
}

// buildPackage runs deb/build, as make deb does, and returns the .deb.
func buildPackage(t *testing.T, bin, out string) string {
	t.Helper()
	cmd := exec.Command("./build", bin, out)
	res, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("deb/build: %v\n%s%s", err, res, stderr)
	}
	pkg := strings.TrimSpace(string(res))
	if !regexp.MustCompile(`/ramjet_[0-9][A-Za-z0-9.+~]*_[a-z0-9]+\.deb$`).MatchString(pkg) {
		t.Fatalf("deb/build printed %q, want OUT/ramjet_VERSION_ARCH.deb", pkg)
	}
	return pkg
}

// lintPackage runs lintian when it is installed (it is not in .ci/deps:
// it pulls ~120 packages) and fails on its errors.
func lintPackage(t *testing.T, pkg string) {
	t.Helper()
	if _, err := exec.LookPath("lintian"); err != nil {
		t.Log("lintian not installed: the package is not linted")
		return
	}
	out, err := exec.Command("lintian", "--allow-root", "--fail-on", "error", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("lintian %s: %v\n%s", pkg, err, out)
	}
	if len(out) > 0 {
		t.Logf("lintian:\n%s", out)
	}
}

// buildOrigin builds cmd/demo-origin into dir: the box's origin, on the
// origin address of the shipped config.
func buildOrigin(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "demo-origin"), "./cmd/demo-origin")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/demo-origin: %v\n%s", err, out)
	}
}

func checkInstalled(t *testing.T, b *box) {
	if got := b.must(t, "dpkg-query", "-W", "-f=${Status}", "ramjet"); got != "install ok installed" {
		t.Errorf("dpkg status %q", got)
	}
	conffiles := b.must(t, "dpkg-query", "-W", "-f=${Conffiles}", "ramjet")
	for _, f := range []string{config, "/etc/logrotate.d/ramjet"} {
		if !strings.Contains(conffiles, " "+f+" ") {
			t.Errorf("%s is not a conffile: %q", f, conffiles)
		}
	}
	for path, want := range map[string]string{
		"/usr/bin/ramjet":                    "root:root 755",
		config:                               "root:ramjet 640", // may hold admin tokens
		"/var/log/ramjet":                    "ramjet:ramjet 755",
		"/var/cache/ramjet":                  "ramjet:ramjet 750", // cache.disk.path's home
		"/lib/systemd/system/ramjet.service": "root:root 644",
		"/etc/logrotate.d/ramjet":            "root:root 644",
		// ramjet wp enable's default --plugin-dir, read by each site's owner.
		"/usr/share/ramjet/wordpress/ramjet-cache/ramjet-cache.php": "root:root 644",
		"/usr/share/ramjet/wordpress/ramjet-cache/src":              "root:root 755",
		"/usr/share/ramjet/grafana/ramjet.json":                     "root:root 644",
	} {
		if got := strings.TrimSpace(b.must(t, "stat", "-c", "%U:%G %a", path)); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	pw := strings.Split(strings.TrimSpace(b.must(t, "getent", "passwd", "ramjet")), ":")
	if uid, _ := strconv.Atoi(pw[2]); uid == 0 || uid >= 1000 || pw[5] != "/nonexistent" || pw[6] != wantShell {
		t.Errorf("ramjet user %q: want a system uid, home /nonexistent, shell %s", pw, wantShell)
	}
	// The unit's user can read the config, as ExecStartPre and ExecReload do.
	b.must(t, "setpriv", "--reuid=ramjet", "--regid=ramjet", "--init-groups", "/usr/bin/ramjet", "check", "--config", config)
	if got := strings.TrimSpace(b.must(t, "systemctl", "is-enabled", "ramjet")); got != "enabled" {
		t.Errorf("is-enabled: %s", got)
	}
	waitServing(t, b, site)
	if out, err := b.run("systemd-analyze", "verify", "/lib/systemd/system/ramjet.service"); err != nil || out != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}

	pid := mainPID(t, b)
	status := b.must(t, "cat", fmt.Sprintf("/proc/%d/status", pid))
	for _, want := range []string{"Uid:\t" + pw[2] + "\t" + pw[2], "CapEff:\t" + unitCaps, "CapAmb:\t" + unitCaps, "NoNewPrivs:\t1"} {
		if !strings.Contains(status, want) {
			t.Errorf("ramjet (pid %d) status lacks %q:\n%s", pid, want, status)
		}
	}
	// LimitNOFILE: systemd sets what it can, at most the hard limit it has
	// itself without CAP_SYS_RESOURCE (this machine's root lacks it; the
	// init of a real Debian has it, and fs.nr_open is 1048576).
	unit := b.must(t, "cat", "/lib/systemd/system/ramjet.service")
	m := regexp.MustCompile(`(?m)^LimitNOFILE=(\d+)$`).FindStringSubmatch(unit)
	if m == nil {
		t.Fatal("the unit sets no LimitNOFILE")
	}
	nofile, _ := strconv.Atoi(m[1])
	want := min(nofile, hardNofile(t, b, 1))
	if got := hardNofile(t, b, pid); got != want {
		t.Errorf("ramjet's open files limit %d, want %d (LimitNOFILE=%d, init's hard limit %d)", got, want, nofile, hardNofile(t, b, 1))
	}
}

func checkServes(t *testing.T, b *box) {
	for i, want := range []string{"fwd=miss; stored", "hit"} {
		if got := cacheStatus(t, b, site+"/"); !strings.Contains(got, want) {
			t.Fatalf("request %d: Cache-Status %q, want %q", i+1, got, want)
		}
	}
	out := b.must(t, "ramjet", "purge", "--tag", "demo") // the demo origin's tag, on the default admin listener
	if !strings.Contains(out, `"tags":1`) {
		t.Errorf("ramjet purge: %s", out)
	}
	if got := cacheStatus(t, b, site+"/"); !strings.Contains(got, "fwd=miss") {
		t.Errorf("after the purge: Cache-Status %q, want a miss", got)
	}
}

// checkReload: systemctl reload runs the unit's ExecReload lines, ramjet
// check and then kill -HUP. A good edit passes the check, is signalled and
// applied; a bad one fails the reload with the check's FILE:LINE message
// in systemctl status, no HUP is sent, and the process and its running
// config stay. (The file watcher sees both edits too and would keep the
// running config on its own, so the HUP is seen in systemd's record of
// the ExecReload runs, not in ramjet's log.)
func checkReload(t *testing.T, b *box) {
	good := b.must(t, "cat", config)
	debug := strings.Replace(good, "debug_headers: false", "debug_headers: true", 1)
	if debug == good {
		t.Fatalf("%s has no debug_headers: false to change", config)
	}
	pid := mainPID(t, b)
	b.write(t, config, debug)
	b.must(t, "systemctl", "reload", "ramjet")
	check, hup := reloadRuns(t, b)
	if check.status != "0" || hup.status != "0" || hup.pid == 0 {
		t.Fatalf("good edit: ExecReload ran check %+v, kill %+v; want both run and exited 0", check, hup)
	}
	if !testbed.Poll(waitFor, func() bool { return debugHeaders(t, b, "/reload-good") }) {
		t.Fatal("after a good edit and systemctl reload, responses carry no X-LiteSpeed-Tag (debug_headers: true)")
	}

	b.write(t, config, debug+"bogus_key: 1\n")
	if out, err := b.run("systemctl", "reload", "ramjet"); err == nil {
		t.Errorf("systemctl reload with a bad config succeeded:\n%s", out)
	}
	badCheck, badHup := reloadRuns(t, b)
	if badCheck.status != "1" || badCheck.pid == check.pid {
		t.Errorf("bad edit: ExecReload's check %+v, want a new run that exited 1", badCheck)
	}
	if badHup != hup {
		t.Errorf("bad edit: kill -HUP ran after the failed check: %+v, before %+v", badHup, hup)
	}
	// The check's own stderr, as systemctl status shows it under its PID.
	checkLine := regexp.MustCompile(`(?m)ramjet\[` + strconv.Itoa(badCheck.pid) + `\]: ` + regexp.QuoteMeta(config) + `:\d+: bogus_key: unknown key$`)
	var status string
	if !testbed.Poll(waitFor, func() bool {
		status, _ = b.run("systemctl", "status", "--no-pager", "-n", "20", "ramjet")
		return checkLine.MatchString(status)
	}) {
		t.Errorf("systemctl status lacks ramjet check's FILE:LINE message:\n%s", status)
	}
	if got := mainPID(t, b); got != pid {
		t.Errorf("main PID %d after the reloads, was %d", got, pid)
	}
	if !debugHeaders(t, b, "/reload-bad") {
		t.Error("the bad edit changed the running config: debug headers are gone")
	}
	b.write(t, config, good)
	b.must(t, "systemctl", "reload", "ramjet")
	if !testbed.Poll(waitFor, func() bool { return !debugHeaders(t, b, "/reload-restored") }) {
		t.Error("the restored config did not apply: debug headers stay")
	}
}

// execRun is systemd's record of one ExecReload command's last run.
type execRun struct {
	pid    int    // 0: never run
	status string // exit status; "" while never run
}

// reloadRuns returns the last runs of the unit's two ExecReload lines,
// ramjet check and kill -HUP, in that order, from systemctl show.
func reloadRuns(t *testing.T, b *box) (check, hup execRun) {
	t.Helper()
	out := b.must(t, "systemctl", "show", "-p", "ExecReload", "ramjet")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "argv[]=/usr/bin/ramjet check --config "+config+" ;") ||
		!strings.Contains(lines[1], "argv[]=/bin/kill -HUP $MAINPID ;") {
		t.Fatalf("ExecReload is not ramjet check then kill -HUP:\n%s", out)
	}
	runs := make([]execRun, 2)
	for i, line := range lines {
		if m := regexp.MustCompile(` pid=(\d+) ;`).FindStringSubmatch(line); m != nil {
			runs[i].pid, _ = strconv.Atoi(m[1]) // \d+ always parses
		}
		if m := regexp.MustCompile(` status=(\d+) `).FindStringSubmatch(line); m != nil {
			runs[i].status = m[1]
		}
	}
	return runs[0], runs[1]
}

// checkPort80: the README's setup listens on :80 as the ramjet user
// (AmbientCapabilities=CAP_NET_BIND_SERVICE).
func checkPort80(t *testing.T, b *box) {
	good := b.must(t, "cat", config)
	port80 := strings.Replace(good, `listen: ":8080"`, `listen: ":80"`, 1)
	if port80 == good {
		t.Fatalf(`%s has no listen: ":8080" to change`, config)
	}
	b.write(t, config, port80)
	b.must(t, "systemctl", "restart", "ramjet")
	waitServing(t, b, "http://127.0.0.1:80")
	b.write(t, config, good)
	b.must(t, "systemctl", "restart", "ramjet")
	waitServing(t, b, site)
}

// checkLogrotate forces a rotation of an access log: the new file is made
// with the old one's owner, and postrotate's SIGUSR1 reaches ramjet
// without stopping it.
func checkLogrotate(t *testing.T, b *box) {
	pid := mainPID(t, b)
	b.sh(t, `echo '127.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 1' >/var/log/ramjet/access.log
chown ramjet:ramjet /var/log/ramjet/access.log
logrotate -f /etc/logrotate.d/ramjet`)
	if got := strings.TrimSpace(b.must(t, "stat", "-c", "%U:%G %a %s", "/var/log/ramjet/access.log")); got != "ramjet:ramjet 640 0" {
		t.Errorf("new access.log: %s, want an empty ramjet:ramjet 640 file", got)
	}
	b.must(t, "test", "-s", "/var/log/ramjet/access.log.1")
	if got := mainPID(t, b); got != pid {
		t.Fatalf("ramjet's PID %d after logrotate, was %d", got, pid)
	}
	waitServing(t, b, site)
}

// checkDocroot runs docroot mode under the unit as shipped: the php-cgi
// workers run as php.user (www-data), not as ramjet, and hold none of
// the capabilities the unit grants ramjet.
func checkDocroot(t *testing.T, b *box) {
	good := b.must(t, "cat", config)
	docroot := strings.Replace(good, `    root: ""`, `    root: "/var/www/ramjet-test"`, 1)
	if docroot == good {
		t.Fatalf(`%s has no docroot root: "" to change`, config)
	}
	b.sh(t, `install -d /var/www/ramjet-test
printf '%s\n' '<?php header("Cache-Control: no-store"); echo file_get_contents("/proc/self/status");' >/var/www/ramjet-test/id.php`)
	b.write(t, config, docroot)
	defer func() {
		b.must(t, "rm", "-rf", "/var/www/ramjet-test")
		b.write(t, config, good)
		b.must(t, "systemctl", "restart", "ramjet")
		waitServing(t, b, site)
	}()
	b.must(t, "systemctl", "restart", "ramjet")
	var body string
	if !testbed.Poll(waitFor, func() bool {
		body, _ = b.run("curl", "-sS", "-f", site+"/id.php")
		return strings.Contains(body, "Uid:")
	}) {
		t.Fatalf("/id.php: %s", body)
	}
	const none = "0000000000000000"
	for _, want := range []string{"Uid:\t33\t33", "Gid:\t33\t33", "CapInh:\t" + none, "CapPrm:\t" + none, "CapEff:\t" + none, "CapAmb:\t" + none} { // www-data
		if !strings.Contains(body, want) {
			t.Errorf("the php-cgi worker's status lacks %q:\n%s", want, body)
		}
	}
}

// checkUpgrade installs the package again over itself: the admin's edit
// of the conffile stays, its permissions too, and the running service
// hands over to the binary installed (SIGUSR2), which systemd then
// follows as the main process; the old one drains and exits.
func checkUpgrade(t *testing.T, b *box, pkg string) {
	pid := mainPID(t, b)
	edited := b.must(t, "cat", config) + "# edited by the admin\n"
	b.write(t, config, edited)
	b.must(t, "dpkg", "-i", "/run/box-share/"+filepath.Base(pkg))
	if got := b.must(t, "cat", config); got != edited {
		t.Error("dpkg -i replaced the admin's edited config")
	}
	if got := strings.TrimSpace(b.must(t, "stat", "-c", "%U:%G %a", config)); got != "root:ramjet 640" {
		t.Errorf("%s after the upgrade: %s", config, got)
	}
	waitServing(t, b, site)
	if got := mainPID(t, b); got == pid {
		t.Errorf("ramjet not restarted by the upgrade (PID %d)", got)
	}
	if j := journal(t, b); !strings.Contains(j, "upgraded: the new process serves") || strings.Contains(j, "upgrade failed") {
		t.Errorf("the upgrade did not hand over (no \"upgraded\" line, or a failure):\n%s", j)
	}
	if !testbed.Poll(waitFor, func() bool { _, err := b.run("kill", "-0", strconv.Itoa(pid)); return err != nil }) {
		t.Errorf("the old process %d still runs after the handover", pid)
	}
}

func checkStop(t *testing.T, b *box) {
	b.must(t, "systemctl", "stop", "ramjet")
	if out, _ := b.run("systemctl", "is-active", "ramjet"); strings.TrimSpace(out) != "inactive" {
		t.Errorf("after stop, is-active: %s", out)
	}
	if !strings.Contains(journal(t, b), `msg=draining signal=terminated`) {
		t.Error("stop did not drain (no draining line for SIGTERM)")
	}
	if out, err := b.run("curl", "-sS", "-o", "/dev/null", site+"/"); err == nil {
		t.Errorf("still serving after stop: %s", out)
	}
	b.must(t, "systemctl", "start", "ramjet")
	waitServing(t, b, site)
}

// checkRemove: dpkg -r stops the running service (prerm) and removes all
// but the conffiles; the user stays.
func checkRemove(t *testing.T, b *box) {
	b.must(t, "dpkg", "-r", "ramjet")
	if out, _ := b.run("systemctl", "is-active", "ramjet"); strings.TrimSpace(out) == "active" {
		t.Error("ramjet still runs after dpkg -r")
	}
	if out, _ := b.run("pgrep", "-x", "ramjet"); out != "" {
		t.Errorf("ramjet processes after dpkg -r: %s", out)
	}
	for _, gone := range []string{"/usr/bin/ramjet", "/lib/systemd/system/ramjet.service"} {
		if _, err := b.run("test", "-e", gone); err == nil {
			t.Errorf("%s left by dpkg -r", gone)
		}
	}
	b.must(t, "test", "-f", config)
	b.must(t, "getent", "passwd", "ramjet")
	if got := b.must(t, "dpkg-query", "-W", "-f=${Status}", "ramjet"); got != "deinstall ok config-files" {
		t.Errorf("dpkg status after -r: %q", got)
	}
}

// checkPurge: dpkg -P leaves nothing of ramjet behind.
func checkPurge(t *testing.T, b *box) {
	b.must(t, "dpkg", "-P", "ramjet")
	for _, gone := range []string{"/etc/ramjet", "/etc/logrotate.d/ramjet", "/var/log/ramjet", "/var/cache/ramjet",
		"/etc/systemd/system/multi-user.target.wants/ramjet.service", "/etc/systemd/system/ramjet.service"} {
		if _, err := b.run("test", "-e", gone); err == nil {
			t.Errorf("%s left by dpkg -P", gone)
		}
	}
	for _, db := range []string{"passwd", "group"} {
		if out, err := b.run("getent", db, "ramjet"); err == nil {
			t.Errorf("%s entry left by dpkg -P: %s", db, out)
		}
	}
	if out := b.must(t, "dpkg-statoverride", "--list"); strings.Contains(out, "ramjet") {
		t.Errorf("statoverride left by dpkg -P:\n%s", out)
	}
	if out, err := b.run("dpkg-query", "-W", "ramjet"); err == nil {
		t.Errorf("dpkg still knows ramjet after -P: %s", out)
	}
}

// waitServing waits until ramjet answers 200 at base.
func waitServing(t *testing.T, b *box, base string) {
	t.Helper()
	var out string
	if !testbed.Poll(waitFor, func() bool {
		out, _ = b.run("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", base+"/healthcheck")
		return out == "200"
	}) {
		status, _ := b.run("systemctl", "status", "ramjet", "--no-pager")
		t.Fatalf("ramjet does not answer at %s: %s\n%s", base, out, status)
	}
}

// cacheStatus requests url inside the box and returns its Cache-Status.
func cacheStatus(t *testing.T, b *box, url string) string {
	t.Helper()
	return header(b.must(t, "curl", "-sS", "-D", "-", "-o", "/dev/null", url), "Cache-Status")
}

// debugHeaders reports whether a new page under site carries the origin's
// X-LiteSpeed-Tag, which only debug_headers lets through.
func debugHeaders(t *testing.T, b *box, path string) bool {
	t.Helper()
	url := fmt.Sprintf("%s%s-%d", site, path, time.Now().UnixNano())
	return header(b.must(t, "curl", "-sS", "-D", "-", "-o", "/dev/null", url), "X-LiteSpeed-Tag") != ""
}

// header returns the value of a header in curl -D output ("" if absent).
func header(resp, name string) string {
	for _, line := range strings.Split(resp, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func mainPID(t *testing.T, b *box) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(b.must(t, "systemctl", "show", "-p", "MainPID", "--value", "ramjet")))
	if err != nil || pid == 0 {
		t.Fatalf("ramjet has no main PID (%v)", err)
	}
	return pid
}

// hardNofile returns the hard open-files limit of a process in the box
// (Go raises its soft limit to it).
func hardNofile(t *testing.T, b *box, pid int) int {
	t.Helper()
	limits := b.must(t, "cat", fmt.Sprintf("/proc/%d/limits", pid))
	for _, line := range strings.Split(limits, "\n") {
		if f := strings.Fields(strings.TrimPrefix(line, "Max open files")); len(f) >= 2 && strings.HasPrefix(line, "Max open files") {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("pid %d: hard open files limit %q", pid, f[1])
			}
			return n
		}
	}
	t.Fatalf("pid %d: no open files limit in\n%s", pid, limits)
	return 0
}

// journal is ramjet's journal in the box, messages only.
func journal(t *testing.T, b *box) string {
	t.Helper()
	return b.must(t, "journalctl", "--no-pager", "-o", "cat", "-u", "ramjet")
}

// checkManPages: man finds the package's ramjet(8) and ramjet.yaml(5),
// and they render, without a warning from groff, with what each is for.
func checkManPages(t *testing.T, b *box) {
	if out, _ := b.run("sh", "-c", "grep -hs '^path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/*"); out != "" {
		t.Skipf("this machine's dpkg leaves man pages out (%s)", strings.TrimSpace(out))
	}
	for _, p := range []struct{ name, file, says string }{
		{"ramjet", "/usr/share/man/man8/ramjet.8.gz", "SIGUSR2"},
		{"ramjet.yaml", "/usr/share/man/man5/ramjet.yaml.5.gz", "cache.disk.path"},
	} {
		if got := strings.TrimSpace(b.must(t, "man", "-w", p.name)); got != p.file {
			t.Errorf("man -w %s: %q, want %s", p.name, got, p.file)
		}
		out := b.must(t, "env", "MANWIDTH=80", "man", "--warnings", "-P", "cat", p.name)
		if strings.Contains(out, "troff:") || !strings.Contains(out, p.says) { // groff warns as "troff: FILE:LINE: warning: ..."
			t.Errorf("man %s: want no troff warning and %q in:\n%s", p.name, p.says, out)
		}
	}
}
