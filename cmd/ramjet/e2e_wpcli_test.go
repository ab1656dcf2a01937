package main_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
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

// wpAccount is one cPanel-style hosting account: a system user of its
// own owning ROOT/home/USER/public_html, a real WordPress there (Debian's,
// with the plugin e2e test's theme and content: post A at /post-a/), served by ramjet in
// docroot mode with PHP running as that user.
type wpAccount struct {
	host, token string
	user        string
	uid, gid    int
	docroot     string
	post        string // the post's id
}

const (
	wpcliTimeout = 3 * time.Minute // a ramjet wp run: one PHP per install
	// wpTestdata holds the WordPress plugin e2e test's theme, setup.php
	// and edit.php.
	wpTestdata = "../../plugins/wordpress/e2e/testdata"
)

// newWPAccount creates the user (removed at cleanup) and its WordPress.
func newWPAccount(t *testing.T, root string, db *testbed.MariaDB, host, token string) *wpAccount {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	a := &wpAccount{host: host, token: token, user: "rjwp" + hex.EncodeToString(b)}
	home := filepath.Join(root, "home", a.user)
	if err := os.MkdirAll(home, 0o711); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("useradd", "--no-create-home", "--home-dir", home, "--shell", "/usr/sbin/nologin", "--user-group", a.user).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", a.user, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", a.user).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", a.user, err, out)
		}
	})
	u, err := user.Lookup(a.user)
	if err != nil {
		t.Fatal(err)
	}
	a.uid, a.gid = atoiT(t, u.Uid), atoiT(t, u.Gid)
	wp := testbed.InstallWordPress(t, testbed.WordPressConfig{
		DB: db, Docroot: filepath.Join(home, "public_html"), Database: a.user,
		Content: map[string]string{"themes/ramjet-e2e": filepath.Join(wpTestdata, "ramjet-e2e-theme")},
	})
	a.docroot = wp.Docroot
	ids := map[string]int{}
	if out := a.php(t, 0, 0, "setup.php", a.docroot, a.host); json.Unmarshal([]byte(lastLineOf(out)), &ids) != nil || ids["post_a"] == 0 {
		t.Fatalf("setup.php printed no post_a id: %s", out)
	}
	a.post = strconv.Itoa(ids["post_a"])
	err = filepath.WalkDir(home, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, a.uid, a.gid)
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// php runs one of the WordPress plugin e2e test's scripts with args, as
// uid and gid (0: as the test).
func (a *wpAccount) php(t *testing.T, uid, gid int, script string, args ...string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(wpTestdata, script))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("php", append([]string{"-d", "display_errors=stderr", "-d", "error_reporting=E_ALL & ~E_DEPRECATED", script}, args...)...)
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if stderr, err := testbed.RunCmd(cmd, time.Minute); err != nil {
		t.Fatalf("php %s %v: %v\n%s\n%s", script, args, err, stdout.String(), stderr)
	}
	return stdout.String()
}

// retitle changes the post's title as the account's user, as the site's
// admin would: its cache plugin sends the purge to ramjet's admin API at
// the end of the run, and nothing is left queued (a refused purge would
// be).
func (a *wpAccount) retitle(t *testing.T, title string) {
	t.Helper()
	out := lastLineOf(a.php(t, a.uid, a.gid, "edit.php", a.docroot, "title", a.post, title))
	if out != `{"queued":null}` && out != `{"queued":[]}` {
		t.Errorf("%s: purges left queued after the edit: %s", a.host, out)
	}
}

// wpEval runs PHP code in the account's WordPress, as its user, and
// returns the last line it printed.
func (a *wpAccount) wpEval(t *testing.T, code string) string {
	t.Helper()
	cmd := exec.Command("php", "-r", `$_SERVER["HTTP_HOST"] = $argv[2]; require $argv[1] . "/wp-load.php"; require_once ABSPATH . "wp-admin/includes/plugin.php"; `+code, a.docroot, a.host)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid)}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: php -r %s: %v\n%s", a.host, code, err, out)
	}
	return lastLineOf(string(out))
}

// pluginSettings reads the account's ramjet-cache settings option.
func (a *wpAccount) pluginSettings(t *testing.T) map[string]any {
	t.Helper()
	out := a.wpEval(t, `echo json_encode(get_option("ramjet_cache_settings", null));`)
	var settings map[string]any
	if err := json.Unmarshal([]byte(out), &settings); err != nil {
		t.Fatalf("%s: ramjet_cache_settings %q: %v", a.host, out, err)
	}
	return settings
}

func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (a *wpAccount) hostYAML(withToken bool) string {
	tok := ""
	if withToken {
		tok = fmt.Sprintf("    admin_token: %q\n", a.token)
	}
	return fmt.Sprintf(`  - names: [%q]
%s    docroot:
      root: %q
      serve: all
      front_controller: /index.php
      php:
        workers: 2
        user: %s
`, a.host, tok, a.docroot, a.user)
}

// wpPage is one GET through ramjet.
type wpPage struct {
	status      int
	body, cache string
}

func getWP(t *testing.T, base, host, path string) wpPage {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", host, path, err)
	}
	defer resp.Body.Close()
	body := new(strings.Builder)
	if _, err := io.Copy(body, resp.Body); err != nil {
		t.Fatal(err)
	}
	return wpPage{resp.StatusCode, body.String(), resp.Header.Get("Cache-Status")}
}

func (p wpPage) hit() bool { return strings.HasPrefix(p.cache, "ramjet; hit") }

// wantCached GETs path twice and wants the second answer from the cache.
func wantCached(t *testing.T, base, host, path string) wpPage {
	t.Helper()
	first := getWP(t, base, host, path)
	second := getWP(t, base, host, path)
	if first.status != 200 || !second.hit() {
		t.Fatalf("%s%s: want 200 then a hit; got %d (%s), then %d (%s)", host, path, first.status, first.cache, second.status, second.cache)
	}
	return second
}

// wpRun runs `ramjet wp ARGS` and returns its exit code and output.
func wpRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out := testbed.RunRamjet(t, wpcliTimeout, append([]string{"wp"}, args...)...)
	t.Logf("ramjet wp %s: exit %d\n%s", strings.Join(args, " "), code, out)
	return code, out
}

// scanRow is the scan output's line for docroot, split in columns.
func scanRow(t *testing.T, out, docroot string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 6 && f[1] == docroot {
			return f
		}
	}
	t.Fatalf("no scan line for %s in:\n%s", docroot, out)
	return nil
}

// debianWPVersion is what Debian's WordPress says its version is, as
// PHP reads it.
func debianWPVersion(t *testing.T) string {
	out, err := exec.Command("php", "-r", `include "/usr/share/wordpress/wp-includes/version.php"; echo $wp_version;`).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// pluginOwners returns the uids owning the files of the account's
// installed ramjet-cache, or nil when it is not installed.
func (a *wpAccount) pluginOwners(t *testing.T) map[uint32]int {
	t.Helper()
	dir := filepath.Join(a.docroot, "wp-content", "plugins", "ramjet-cache")
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil
	}
	owners := map[uint32]int{}
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		owners[fi.Sys().(*syscall.Stat_t).Uid]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return owners
}

// TestWPEnableGivesEachCPanelAccountsWordPressItsOwnPurgeToken: two real
// WordPress installs in /home/USER/public_html, each owned by its own
// user. `ramjet wp scan` lists both with their site, owner and version;
// bad input (a directory that is no WordPress, a wp-config.php its owner
// cannot read, a site without a token) stops `enable` with a clear error
// and changes nothing; `enable --all` installs and activates ramjet-cache
// in both as their owners (its files are theirs), each with its own
// site's token: an edit in one purges that site's page and not the
// other's, and one site's token cannot purge the other's pages. `disable`
// puts both back; an opt-out flag keeps an install out of `enable --all`.
func TestWPEnableGivesEachCPanelAccountsWordPressItsOwnPurgeToken(t *testing.T) {
	if os.Geteuid() != 0 {
		testbed.Skip(t, "creating the accounts' users and running PHP as them needs root (CI runs as root)")
	}
	for _, bin := range []string{"/usr/sbin/useradd", "/usr/bin/php", "/usr/bin/php-cgi"} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s: %v (Debian packages passwd, php-cli, php-cgi)", bin, err)
		}
	}
	root := testbed.PublicDir(t)
	db := testbed.StartMariaDB(t)
	a := newWPAccount(t, root, db, "a.test", "token-of-a")
	b := newWPAccount(t, root, db, "b.test", "token-of-b")
	rj := testbed.NewRamjet(t)
	config := func(tokenB bool) string {
		return fmt.Sprintf("admin:\n  listen: %q\n  token: operator-token\nhosts:\n%s%s", rj.AdminAddr, a.hostYAML(true), b.hostYAML(tokenB))
	}
	cfg := testbed.WriteConfig(t, "", config(true))
	rj.Start(t, "--config", cfg)
	plugin, err := filepath.Abs("../../plugins/wordpress/ramjet-cache")
	if err != nil {
		t.Fatal(err)
	}
	enable := func(args ...string) (int, string) {
		return wpRun(t, append([]string{"enable", "-c", cfg, "--plugin-dir", plugin}, args...)...)
	}
	version := debianWPVersion(t)
	wantScan := func(t *testing.T, cacheA, cacheB, flagB string) {
		t.Helper()
		code, out := wpRun(t, "scan", "-c", cfg)
		if code != 0 {
			t.Fatalf("wp scan: exit %d\n%s", code, out)
		}
		for _, w := range []struct {
			acc           *wpAccount
			cache, optOut string
		}{{a, cacheA, "-"}, {b, cacheB, flagB}} {
			want := []string{w.acc.host, w.acc.docroot, w.acc.user, version, w.cache, w.optOut}
			if got := scanRow(t, out, w.acc.docroot); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("scan line %v, want %v", got, want)
			}
		}
	}

	t.Run("scan lists both installs with their site, owner and version", func(t *testing.T) {
		wantScan(t, "none", "none", "-")
		if p := getWP(t, rj.URL, a.host, "/post-a/"); p.status != 200 || !strings.Contains(p.body, "Post A original") {
			t.Fatalf("a.test /post-a/: %d %.300s", p.status, p.body)
		}
		if p := getWP(t, rj.URL, a.host, "/post-a/"); p.hit() {
			t.Fatalf("a.test /post-a/ is cached before any cache plugin runs: %s", p.cache)
		}
	})

	t.Run("bad input stops enable with a clear error and changes nothing", func(t *testing.T) {
		notWP := t.TempDir()
		code, out := enable(notWP)
		if code != 1 || !strings.Contains(out, notWP+": not a WordPress install: no wp-includes/version.php") {
			t.Errorf("enable %s: exit %d, want 1 saying it is not a WordPress install", notWP, code)
		}
		if code, out := enable("c.test"); code != 1 || !strings.Contains(out, `"c.test" is no site of the config and no WordPress install`) {
			t.Errorf("enable c.test: exit %d, want 1 saying there is no such site\n%s", code, out)
		}
		wpConfig := filepath.Join(b.docroot, "wp-config.php")
		if err := os.Chown(wpConfig, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(wpConfig, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out = enable("--all")
		if code != 1 || !strings.Contains(out, wpConfig+" is not readable by "+b.user) || !strings.Contains(out, "nothing changed") {
			t.Errorf("enable --all with b's wp-config.php unreadable by b: exit %d, want 1 naming the file and its owner", code)
		}
		if err := os.Chown(wpConfig, b.uid, b.gid); err != nil {
			t.Fatal(err)
		}
		noToken := testbed.WriteConfig(t, "", config(false))
		code, out = wpRun(t, "enable", "-c", noToken, "--plugin-dir", plugin, "--all")
		if code != 1 || !strings.Contains(out, "(b.test): the site has no admin_token") {
			t.Errorf("enable --all with b.test tokenless: exit %d, want 1 naming b.test's missing token", code)
		}
		for _, acc := range []*wpAccount{a, b} {
			if o := acc.pluginOwners(t); o != nil {
				t.Errorf("%s: ramjet-cache installed by a failed enable", acc.host)
			}
		}
		wantScan(t, "none", "none", "-")
	})
	t.Run("enable --all activates ramjet-cache in both as their owners", func(t *testing.T) {
		if code, out := enable("--all"); code != 0 {
			t.Fatalf("enable --all: exit %d\n%s", code, out)
		}
		for _, acc := range []*wpAccount{a, b} {
			owners := acc.pluginOwners(t)
			if len(owners) != 1 || owners[uint32(acc.uid)] == 0 {
				t.Errorf("%s: ramjet-cache's files belong to uids %v, want all %d (%s)", acc.host, owners, acc.uid, acc.user)
			}
			if got := acc.pluginSettings(t); got["admin_token"] != acc.token || got["admin_url"] != rj.AdminURL {
				t.Errorf("%s: the plugin has admin_url %v and admin_token %v, want %s and its site's token %s", acc.host, got["admin_url"], got["admin_token"], rj.AdminURL, acc.token)
			}
		}
		wantScan(t, "ramjet-cache", "ramjet-cache", "-")
	})
	t.Run("each site purges its own pages with its own token", func(t *testing.T) {
		wantCached(t, rj.URL, a.host, "/post-a/")
		wantCached(t, rj.URL, b.host, "/post-a/")
		a.retitle(t, "Edited on a.test")
		if p := getWP(t, rj.URL, a.host, "/post-a/"); p.hit() || !strings.Contains(p.body, "Edited on a.test") {
			t.Errorf("a.test /post-a/ after its edit: %s, body has the new title: %v", p.cache, strings.Contains(p.body, "Edited on a.test"))
		}
		if p := getWP(t, rj.URL, b.host, "/post-a/"); !p.hit() {
			t.Errorf("b.test /post-a/ after a.test's edit: %s, want still a hit", p.cache)
		}
		wantCached(t, rj.URL, a.host, "/post-a/")
		b.retitle(t, "Edited on b.test")
		if p := getWP(t, rj.URL, b.host, "/post-a/"); p.hit() || !strings.Contains(p.body, "Edited on b.test") {
			t.Errorf("b.test /post-a/ after its edit: %s", p.cache)
		}
		if p := getWP(t, rj.URL, a.host, "/post-a/"); !p.hit() {
			t.Errorf("a.test /post-a/ after b.test's edit: %s, want still a hit", p.cache)
		}
		wantCached(t, rj.URL, b.host, "/post-a/")
		code, out := testbed.RunRamjet(t, time.Minute, "purge", "--admin", rj.AdminURL, "--token", a.token, "--host", b.host, "--url", "/post-a/")
		if code == 0 || !strings.Contains(out, "403") {
			t.Errorf("a.test's token purging b.test: exit %d, want a refusal (403)\n%s", code, out)
		}
		if p := getWP(t, rj.URL, b.host, "/post-a/"); !p.hit() {
			t.Errorf("b.test /post-a/ after a.test's token tried to purge it: %s", p.cache)
		}
	})
	t.Run("disable puts both installs back", func(t *testing.T) {
		if code, out := wpRun(t, "disable", "-c", cfg, "--all"); code != 0 {
			t.Fatalf("disable --all: exit %d\n%s", code, out)
		}
		for _, acc := range []*wpAccount{a, b} {
			if o := acc.pluginOwners(t); o != nil {
				t.Errorf("%s: ramjet-cache still installed after disable", acc.host)
			}
			if got := acc.pluginSettings(t); got["admin_token"] != nil || got["admin_url"] != nil {
				t.Errorf("%s: the token enable gave is still in the plugin's settings after disable: %v", acc.host, got)
			}
		}
		wantScan(t, "none", "none", "-")
	})
	t.Run("with the stock LiteSpeed Cache plugin active, enable switches its cache on", func(t *testing.T) {
		// A stand-in with the stock plugin's directory and main file: the
		// real one is in no package registry reachable here
		// (plugins/wordpress/README.md).
		lscache := filepath.Join(b.docroot, "wp-content", "plugins", "litespeed-cache")
		if err := os.Mkdir(lscache, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lscache, "litespeed-cache.php"), []byte("<?php\n/**\n * Plugin Name: LiteSpeed Cache\n */\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(lscache, b.uid, b.gid); err != nil {
			t.Fatal(err)
		}
		b.wpEval(t, `activate_plugin("litespeed-cache/litespeed-cache.php"); update_option("litespeed.conf.cache", 0);`)
		// Options read back from the database are strings.
		cacheOption := func() string { return b.wpEval(t, `echo get_option("litespeed.conf.cache", "unset");`) }
		if code, out := enable(b.host); code != 0 || !strings.Contains(out, "enabled litespeed-cache as "+b.user) {
			t.Fatalf("enable b.test: exit %d, want 0 and litespeed-cache enabled\n%s", code, out)
		}
		if got := cacheOption(); got != "1" {
			t.Errorf("litespeed.conf.cache after enable: %s, want 1", got)
		}
		if b.pluginOwners(t) != nil {
			t.Error("enable installed ramjet-cache beside the active LiteSpeed Cache plugin")
		}
		wantScan(t, "none", "litespeed-cache", "-")
		if code, out := wpRun(t, "disable", "-c", cfg, b.host); code != 0 {
			t.Fatalf("disable b.test: exit %d\n%s", code, out)
		}
		if got := cacheOption(); got != "0" {
			t.Errorf("litespeed.conf.cache after disable: %s, want 0 as before", got)
		}
		if got := b.wpEval(t, `echo is_plugin_active("litespeed-cache/litespeed-cache.php") ? "active" : "inactive";`); got != "active" {
			t.Errorf("disable deactivated the site's own LiteSpeed Cache plugin: %s", got)
		}
		b.wpEval(t, `deactivate_plugins("litespeed-cache/litespeed-cache.php"); delete_option("litespeed.conf.cache");`)
		if err := os.RemoveAll(lscache); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an opt-out flag keeps an install out of enable", func(t *testing.T) {
		flag := filepath.Join(b.docroot, ".ramjet_flag")
		if err := os.WriteFile(flag, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := enable("--all")
		if code != 0 || !strings.Contains(out, "skipped: opted out by .ramjet_flag") {
			t.Fatalf("enable --all with b.test flagged: exit %d, want 0 and b.test skipped\n%s", code, out)
		}
		wantScan(t, "ramjet-cache", "none", ".ramjet_flag")
		if code, out := enable(b.host); code != 1 || !strings.Contains(out, "opted out by "+flag) {
			t.Errorf("enable b.test by name while flagged: exit %d, want 1 saying it opted out\n%s", code, out)
		}
		wantScan(t, "ramjet-cache", "none", ".ramjet_flag")
		if code, out := wpRun(t, "disable", "-c", cfg, a.host); code != 0 {
			t.Fatalf("disable a.test: exit %d\n%s", code, out)
		}
		wantScan(t, "none", "none", ".ramjet_flag")
	})
}

// TestWPRefusesUnclearCommands: ramjet wp without a subcommand, enable
// without naming what (or naming both sites and --all), a scan with
// nowhere to look or a root that does not exist, and a config that does
// not parse all stop with a message and change nothing.
func TestWPRefusesUnclearCommands(t *testing.T) {
	bad := testbed.WriteConfig(t, "", "hosts:\n  - names: [a.test]\n    docroot_typo: /x\n")
	missing := filepath.Join(t.TempDir(), "nope")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"wp"}, 2, "usage: ramjet wp scan|enable|disable"},
		{[]string{"wp", "enable", "--root", missing}, 2, "name the sites (names or directories), or --all"},
		{[]string{"wp", "disable", "--root", missing, "--all", "a.test"}, 2, "name the sites"},
		{[]string{"wp", "scan"}, 2, "nowhere to search: give --root DIR or -c CONFIG"},
		{[]string{"wp", "scan", "--root", missing}, 1, missing},
		{[]string{"wp", "enable", "-c", bad, "--all"}, 1, bad + ":3: "},
	} {
		code, out := testbed.RunRamjet(t, time.Minute, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("ramjet %s: exit %d, want %d with %q\n%s", strings.Join(tt.args, " "), code, tt.code, tt.want, out)
		}
	}
}
