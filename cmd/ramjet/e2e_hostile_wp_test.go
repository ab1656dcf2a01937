package main_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// hostileUser is a system user of the test's own (removed at cleanup).
func hostileUser(t *testing.T) (name string, uid, gid int) {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name = "rjhw" + hex.EncodeToString(b)
	if out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() }) //nolint:errcheck // best effort
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return name, atoiT(t, u.Uid), atoiT(t, u.Gid)
}

// fakeWordPress makes dir an install (wp-includes/version.php and
// wp-config.php) owned by uid.
func fakeWordPress(t *testing.T, dir string, uid, gid int, mode os.FileMode) {
	t.Helper()
	for p, content := range map[string]string{"wp-includes/version.php": "<?php\n$wp_version = '6.4.2';\n", "wp-config.php": "<?php\n"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chown(filepath.Dir(full), uid, gid) //nolint:errcheck // checked through dir's
		if err := os.Chown(full, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// tenantSite is a.test, whose docroot (ROOT/public_html, empty) belongs
// to a user of its own who runs its PHP, in a config of its own; it
// skips the test unless run as root.
func tenantSite(t *testing.T) (root, docroot, cfg string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testbed.Skip(t, "creating users and running PHP as them needs root (CI runs as root)")
	}
	root = testbed.PublicDir(t)
	user, uid, gid := hostileUser(t)
	docroot = filepath.Join(root, "public_html")
	if err := os.MkdirAll(docroot, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(docroot, uid, gid); err != nil {
		t.Fatal(err)
	}
	cfg = testbed.WriteConfig(t, "", fmt.Sprintf("hosts:\n  - names: [a.test]\n    docroot:\n      root: %q\n      php:\n        user: %s\n", docroot, user))
	return root, docroot, cfg
}

// ownerOf is the uid and gid owning dir.
func ownerOf(t *testing.T, dir string) (uid, gid int) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// fakePHP is a php-cli that records who ran it and the request it was
// given (which carries the site's token) in log, then answers as wp.php
// does for an install without a cache plugin.
func fakePHP(t *testing.T, dir, log string) string {
	t.Helper()
	php := filepath.Join(dir, "php")
	script := fmt.Sprintf("#!/bin/sh\nreq=$(cat)\necho \"uid=$(id -u) $req\" >> %s\nprintf '\\nRAMJET-WP-RESULT {\"cache\":\"\",\"enabled\":\"\"}\\n'\n", log)
	if err := os.WriteFile(php, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(log, 0o666); err != nil {
		t.Fatal(err)
	}
	return php
}

// A tenant must not get another site's token through ramjet wp, which
// runs as root and hands a site's token to the PHP of every install it
// matches to the site, as the install's owner. Tenant A makes an install
// in site B's world-writable cache directory; before, it was B's (the
// deepest root holding it) and `wp enable --all` ran A's PHP with B's
// token on its stdin (the fake php's log had "uid=A ... token-of-b").
// Now it gets no site: enable says which directory is not A's and runs
// nothing as A. So does a site whose root is A's own symlink to B's
// blog: B's blog stays B's.
func TestWPEnableGivesNoTenantAnotherSitesToken(t *testing.T) {
	if os.Geteuid() != 0 {
		testbed.Skip(t, "creating users and running PHP as them needs root (CI runs as root)")
	}
	root := testbed.PublicDir(t)
	aUser, aUID, aGID := hostileUser(t)
	bUser, bUID, bGID := hostileUser(t)
	bRoot := filepath.Join(root, "b", "public_html")
	fakeWordPress(t, bRoot, bUID, bGID, 0o755)
	fakeWordPress(t, filepath.Join(bRoot, "blog"), bUID, bGID, 0o755)
	cache := filepath.Join(bRoot, "cache")
	if err := os.Mkdir(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(cache, bUID, bGID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(cache, "evil")
	fakeWordPress(t, planted, aUID, aGID, 0o755) // what A can do in a directory every user may write
	aHome := filepath.Join(root, "a")
	fakeWordPress(t, aHome, aUID, aGID, 0o755)
	aRoot := filepath.Join(aHome, "public_html")
	if err := os.Symlink(filepath.Join(bRoot, "blog"), aRoot); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(aRoot, aUID, aGID); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(root, "php.log")
	php := fakePHP(t, root, log)
	plugin, err := filepath.Abs("../../plugins/wordpress/ramjet-cache")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  listen: 127.0.0.1:1
  token: operator-token
hosts:
  - names: [a.test]
    admin_token: token-of-a
    docroot:
      root: %q
      php:
        user: %s
  - names: [b.test]
    admin_token: token-of-b
    docroot:
      root: %q
      php:
        user: %s
`, aRoot, aUser, bRoot, bUser))

	code, out := wpRun(t, "enable", "-c", cfg, "--php", php, "--plugin-dir", plugin, "--all")
	ran, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the fake php's log:\n%s", ran)
	for _, line := range strings.Split(string(ran), "\n") {
		if strings.Contains(line, "token-of-b") && !strings.HasPrefix(line, fmt.Sprintf("uid=%d ", bUID)) {
			t.Errorf("b.test's token went to another user's PHP: %s", line)
		}
		if strings.Contains(line, "token-of-a") {
			t.Errorf("a.test's token went to PHP in b's tree: %s", line)
		}
	}
	want := fmt.Sprintf("%s: not given b.test's token: %s belongs to uid %d, not to %s who owns the install", planted, cache, bUID, aUser)
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("enable --all: exit %d, want 1 saying %q", code, want)
	}
	if code, out = wpRun(t, "scan", "-c", cfg, "--php", php); code != 0 || !strings.Contains(out, "ramjet wp scan: "+want) {
		t.Errorf("wp scan: exit %d, want 0 saying %q", code, want)
	}
	code, out = wpRun(t, "enable", "-c", cfg, "--php", php, "--plugin-dir", plugin, "b.test")
	if code != 0 || !strings.Contains(out, "b.test\t"+filepath.Join(bRoot, "blog")+"\tenabled") || strings.Contains(out, "a.test") {
		t.Errorf("enable b.test: exit %d, want b's blog enabled as b.test's and nothing as a.test's", code)
	}
}

// ramjet wp scan and disable give no PHP a site's token: only enable
// stores it. Before, every run asked each install's status with the
// token on its stdin, so a scan showed it to whatever PHP the install's
// owner had put there (the fake php's log had "token-of-b" after scan).
func TestWPScanAndDisableShowNoPHPTheToken(t *testing.T) {
	if os.Geteuid() != 0 {
		testbed.Skip(t, "creating users and running PHP as them needs root (CI runs as root)")
	}
	root := testbed.PublicDir(t)
	bUser, bUID, bGID := hostileUser(t)
	bRoot := filepath.Join(root, "b", "public_html")
	fakeWordPress(t, bRoot, bUID, bGID, 0o755)
	log := filepath.Join(root, "php.log")
	php := fakePHP(t, root, log)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf(`admin:
  listen: 127.0.0.1:1
  token: operator-token
hosts:
  - names: [b.test]
    admin_token: token-of-b
    docroot:
      root: %q
      php:
        user: %s
`, bRoot, bUser))
	for _, args := range [][]string{{"scan"}, {"disable", "--all"}} {
		if code, _ := wpRun(t, append(args, "-c", cfg, "--php", php)...); code != 0 {
			t.Errorf("wp %s: exit %d", args[0], code)
		}
	}
	ran, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ran), `"host":"b.test"`) || strings.Contains(string(ran), "token-of-b") {
		t.Errorf("want b.test's PHP run without its token; the fake php's log:\n%s", ran)
	}
}

// A tenant's PHP cannot exhaust or hang ramjet wp, which runs as root
// over every install: PHP printing hundreds of MB is kept to its end
// (before, ramjet wp scan held it all: max RSS 1.3 GB for 300 MB), and a
// child it leaves behind holding the output does not keep ramjet
// waiting (before, scan waited for the child's 120 s sleep and the
// test's 40 s bound killed it).
func TestWPSurvivesAHostileInstallsPHP(t *testing.T) {
	root, docroot, cfg := tenantSite(t)
	uid, gid := ownerOf(t, docroot)
	fakeWordPress(t, docroot, uid, gid, 0o755)
	result := `printf '\nRAMJET-WP-RESULT {"cache":"","enabled":""}\n'`
	for _, tt := range []struct{ name, script string }{
		{"floods its output", "head -c 300000000 /dev/zero | tr '\\0' x\n" + result},
		{"leaves a child holding its output", "sleep 120 &\n" + result},
	} {
		t.Run(tt.name, func(t *testing.T) {
			php := filepath.Join(root, strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.WriteFile(php, []byte("#!/bin/sh\ncat >/dev/null\n"+tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(testbed.Binary(t), "wp", "scan", "-c", cfg, "--php", php)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// The peak is read from the process's own VmHWM while it runs:
			// wait4's ru_maxrss starts from the test binary's own peak (the
			// child began as a vfork of it), which under -race alone is
			// hundreds of MB.
			rss, tick, limit := 0, time.NewTicker(5*time.Millisecond), time.After(40*time.Second)
			defer tick.Stop()
		wait:
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("wp scan: %v\n%s", err, out.String())
					}
					break wait
				case <-tick.C:
					rss = max(rss, vmHWM(cmd.Process.Pid))
				case <-limit:
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // it hung
					<-done
					t.Fatalf("wp scan still runs after 40 s:\n%s", out.String())
				}
			}
			t.Logf("wp scan: max RSS %d KiB\n%s", rss, out.String())
			if rss > 100<<10 {
				t.Errorf("wp scan grew to %d KiB", rss)
			}
			if !strings.Contains(out.String(), docroot) || !strings.Contains(out.String(), "none") {
				t.Errorf("the scan does not list the install with no cache plugin:\n%s", out.String())
			}
		})
	}
}

// ramjet wp runs as root in an admin's terminal and shows what tenants
// control: their directories' names and their PHP's answers. Their
// control characters are shown as escapes, and a newline or tab in a
// name stays in its field: before, an install named with an OSC 2 retitled
// the admin's terminal and a newline in it forged a scan line of its own
// ("b.test  /forged ..."), and a status from the install's PHP wrote
// its CSI 2J (clear screen) as it was.
func TestWPShowsWhatTenantsControlAsText(t *testing.T) {
	root, docroot, cfg := tenantSite(t)
	evil := filepath.Join(docroot, "x\x1b]2;pwned\x07\nb.test\t/forged\tforged\t1\tnone\t-")
	uid, gid := ownerOf(t, docroot)
	fakeWordPress(t, evil, uid, gid, 0o755)
	php := filepath.Join(root, "php")
	script := `#!/bin/sh
cat >/dev/null
printf '\nRAMJET-WP-RESULT {"cache":"\\u001b[2Jlitespeed","enabled":""}\n'
`
	if err := os.WriteFile(php, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := wpRun(t, "scan", "-c", cfg, "--php", php)
	if code != 0 {
		t.Fatalf("wp scan: exit %d", code)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("the scan wrote a tenant's control characters to the terminal: %q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "b.test") {
			t.Errorf("a directory's name forged a scan line: %q", line)
		}
	}
	if !strings.Contains(out, `x\x1b]2;pwned\x07\x0ab.test\x09/forged`) || !strings.Contains(out, `\x1b[2Jlitespeed`) {
		t.Errorf("the scan does not show the name and the cache plugin with their escapes: %q", out)
	}
}

// ramjet wp reads an install's wp-includes/version.php as root: a tenant
// whose wp-includes is a symlink to a directory only root may read gets
// no line of it. Before, scan listed the install with the version read
// through the link (rootsecret, from a root-only version.php); now it is
// skipped, saying wp-includes is not a directory of the install.
func TestWPReadsNoFileThroughATenantsSymlink(t *testing.T) {
	root, docroot, cfg := tenantSite(t)
	uid, gid := ownerOf(t, docroot)
	fakeWordPress(t, docroot, uid, gid, 0o755)
	private := filepath.Join(root, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(private, "version.php"), []byte("<?php\n$wp_version = 'rootsecret';\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(docroot, "wp-includes")
	if err := os.RemoveAll(inc); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, inc); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(inc, uid, gid); err != nil {
		t.Fatal(err)
	}
	code, out := wpRun(t, "scan", "-c", cfg, "--php", "/bin/false")
	if code != 0 || strings.Contains(out, "rootsecret") || !strings.Contains(out, "skipped: "+filepath.Join(docroot, "wp-includes", "version.php")) {
		t.Errorf("wp scan: exit %d, want 0 with the install skipped and nothing of %s", code, private)
	}
}

// vmHWM is a running process's peak resident set in KiB (0 once it is
// gone).
func vmHWM(pid int) int {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
