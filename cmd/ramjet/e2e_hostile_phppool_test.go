package main_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestPHPGetsNoneOfRamjetsEnvironment: php-cgi's environment is php.env
// only (php-fpm's clear_env), never ramjet's, which may hold secrets; a
// bare NAME in php.env passes ramjet's value on.
func TestPHPGetsNoneOfRamjetsEnvironment(t *testing.T) {
	t.Parallel()
	root := identityDocroot(t)
	rj := testbed.NewRamjet(t)
	rj.Env = []string{"RAMJET_TEST_SECRET=hunter2", "RAMJET_PASSED=given"}
	rj.Start(t, "--config", phpConfig(t, root, "workers: 1\nenv: [APP_ENV=prod, RAMJET_PASSED]"))
	r := get(t, &http.Client{Timeout: 10 * time.Second}, rj.URL+"/identity.php")
	mustStatus(t, r, 200, "identity.php")
	for _, want := range []string{"getenv false\n", "server NULL\n", "app 'prod'\n", "passed 'given'\n"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("PHP's environment: want %q in\n%s", want, r.Body)
		}
	}
}

// unitCaps are the capabilities conf/ramjet.service grants ramjet
// (AmbientCapabilities), as setpriv names them.
const unitCaps = "+net_bind_service,+setuid,+setgid,+chown,+kill,+sys_ptrace,+dac_read_search"

// TestPackagedLayoutRunsPHPAsTheSitesUserWithoutCapabilities runs ramjet
// as the packaged unit does: a non-root user (daemon here) holding the
// unit's ambient capabilities. A docroot site's PHP runs as its php.user
// (www-data), not as ramjet's user, and holds no capability: PHP that
// kept CAP_SETUID could make itself root.
func TestPackagedLayoutRunsPHPAsTheSitesUserWithoutCapabilities(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testbed.Skip(t, "starting ramjet as another user with capabilities needs root")
	}
	www, err := user.Lookup("www-data")
	if err != nil {
		testbed.Skip(t, err)
	}
	root := identityDocroot(t)
	// The site's files are its user's alone, as README's per-site setup
	// has them: ramjet reads the static ones with CAP_DAC_READ_SEARCH.
	uid, gid := atoiT(t, www.Uid), atoiT(t, www.Gid)
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return err
		}
		return os.Chmod(p, info.Mode().Perm()&^0o007)
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := publicConfig(t, phpConfig(t, root, "workers: 2\nuser: www-data\ngroup: www-data"))
	rj := testbed.NewRamjet(t)
	rj.Binary = asServiceUser(t, "daemon", unitCaps)
	rj.Start(t, "--config", cfg)
	c := &http.Client{Timeout: 10 * time.Second}
	mustStatus(t, get(t, c, rj.URL+"/static/style.css"), 200, "a static file of the site's user alone")
	r := get(t, c, rj.URL+"/identity.php")
	mustStatus(t, r, 200, "identity.php")
	for _, want := range []string{"uid " + www.Uid + "\n", "gid " + www.Gid + "\n", "CapInh:\t0000000000000000\n",
		"CapPrm:\t0000000000000000\n", "CapEff:\t0000000000000000\n", "CapAmb:\t0000000000000000\n"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("PHP under the packaged layout: want %q in\n%s", want, r.Body)
		}
	}
}

// TestCheckRefusesPHPAsRamjetsOwnUserOrSharedBetweenSites: ramjet check
// (run as the service's user, as the unit's ExecStartPre does) refuses a
// docroot site whose PHP would run as ramjet's own user, and two sites
// with different roots sharing a PHP user unless both say
// php.shared_user, with FILE:LINE messages; a site with a user of its
// own passes.
func TestCheckRefusesPHPAsRamjetsOwnUserOrSharedBetweenSites(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testbed.Skip(t, "running check as another user needs root")
	}
	a, b := phpDocroot(t), phpDocroot(t)
	site := func(name, root, php string) string {
		return fmt.Sprintf("  - names: [%s]\n    docroot:\n      root: %q\n      php: {%s}\n", name, root, php)
	}
	bin := asServiceUser(t, "daemon", "")
	tests := []struct {
		name string
		yaml string
		want string // "" = ok
	}{
		{"a user of its own", "hosts:\n" + site("a.test", a, "user: www-data, group: www-data"), ""},
		{"ramjet's own user", "hosts:\n" + site("a.test", a, "user: daemon, group: www-data"),
			`ramjet.yaml:5: hosts[0].docroot.php.user: "daemon" (uid 1) is the user ramjet runs as`},
		{"two sites, one user", "hosts:\n" + site("a.test", a, "user: www-data") + site("b.test", b, "user: www-data"),
			`ramjet.yaml:9: hosts[1].docroot.php.user: "www-data" also runs the PHP of hosts[0]`},
		{"two sites sharing on purpose", "hosts:\n" + site("a.test", a, "user: www-data, shared_user: true") +
			site("b.test", b, "user: www-data, shared_user: true"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := publicConfig(t, testbed.WriteConfig(t, "", tt.yaml))
			out, err := exec.Command(bin, "check", "--config", cfg).CombinedOutput()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("check: %v\n%s", err, out)
			case tt.want != "" && (err == nil || !strings.Contains(string(out), tt.want)):
				t.Fatalf("check: %v\n%s\nwant exit 1 with %q", err, out, tt.want)
			}
		})
	}
}

// asServiceUser returns a program that runs the ramjet binary as user
// with the ambient capabilities caps (setpriv's list; "" for none), as
// systemd starts it under the packaged unit.
func asServiceUser(t *testing.T, name, caps string) string {
	t.Helper()
	if _, err := exec.LookPath("setpriv"); err != nil {
		testbed.Skip(t, err)
	}
	dir := testbed.PublicDir(t)
	bin := filepath.Join(dir, "ramjet")
	copyFile(t, testbed.Binary(t), bin, 0o755)
	capArgs := ""
	if caps != "" {
		capArgs = "--inh-caps=" + caps + " --ambient-caps=" + caps + " "
	}
	script := fmt.Sprintf("#!/bin/sh\nexec setpriv --reuid=%s --regid=%s --clear-groups %s%s \"$@\"\n", name, name, capArgs, bin)
	wrapper := filepath.Join(dir, "ramjet-as-"+name)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

// identityDocroot is phpDocroot with identity.php, which shows who PHP
// runs as: uid, gid, capabilities, environment.
func identityDocroot(t *testing.T) string {
	t.Helper()
	root := phpDocroot(t)
	copyFile(t, "../../phppool/testdata/identity.php", filepath.Join(root, "identity.php"), 0o644)
	return root
}

// publicConfig makes the config file at path readable by every user.
func publicConfig(t *testing.T, path string) string {
	t.Helper()
	dir := testbed.PublicDir(t)
	dst := filepath.Join(dir, "ramjet.yaml")
	copyFile(t, path, dst, 0o644)
	return dst
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
