package main_test

// More than RAM: the disk tier answers what RAM no longer holds as hits,
// purges reach the pages only on disk, and ramjet check refuses a disk
// path the service could not use.

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// smallRAM is a RAM tier of 1 MiB: about 30 pages of 30 KB.
const smallRAM = "  size: 1MiB\n  max_object_size: 256KiB\n"

func page30K(ns, name, tag string) string {
	return "/e/" + ns + "/" + name + "?size=30000&" + hq("Cache-Control: max-age=300", "X-LiteSpeed-Tag: "+tag)
}

// fillPages caches the pages names (30 KB each, tagged ns-NAME) and waits
// until the writer copied as many.
func (n *diskNode) fillPages(t *testing.T, ns string, names []string) map[string]result {
	t.Helper()
	first := map[string]result{}
	for _, name := range names {
		first[name] = n.get(t, page30K(ns, name, ns+"-"+name))
		mustMissStored(t, first[name], "first request of "+name)
	}
	want := float64(len(names))
	if !testbed.Poll(testbed.StopTimeout, func() bool { return n.metric(t, "ramjet_disk_written_total") >= want }) {
		t.Fatalf("ramjet_disk_written_total = %v, want %v", n.metric(t, "ramjet_disk_written_total"), want)
	}
	return first
}

func pageNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return names
}

// A working set 2.4 times the RAM tier: every page, asked again, is a
// hit with the body first stored, from RAM or from disk.
func TestDiskTierServesAWorkingSetLargerThanRAMAsHits(t *testing.T) {
	t.Parallel()
	n := startDiskNodeWith(t, t.TempDir(), smallRAM)
	ns := nsFor(t)
	names := pageNames("p", 80)
	first := n.fillPages(t, ns, names)
	for round := range 2 {
		for _, name := range names {
			r := n.get(t, page30K(ns, name, ns+"-"+name))
			mustFreshHit(t, r, fmt.Sprintf("round %d: %s", round+1, name))
			if r.ID() != first[name].ID() {
				t.Fatalf("%s: body id %q, want the stored %q", name, r.ID(), first[name].ID())
			}
		}
	}
	if v := n.metric(t, "ramjet_disk_hits_total"); v < 40 {
		t.Errorf("ramjet_disk_hits_total = %v: most of 160 hits over a 1 MiB RAM tier must come from disk", v)
	}
}

// Pages only on disk (the oldest, past what a restart loads into RAM)
// purged by tag and by URL are fetched again; a page no purge names is a
// hit from disk.
func TestDiskTierPurgeOfAPageOnlyOnDiskIsHonoured(t *testing.T) {
	t.Parallel()
	n := startDiskNodeWith(t, t.TempDir(), smallRAM)
	ns := nsFor(t)
	targets := []string{"by-tag", "by-url", "kept"}
	first := n.fillPages(t, ns, append(targets, pageNames("filler", 60)...))
	n.restart(t) // loads the newest files up to 1 MiB: the targets stay on disk only
	if v := n.metric(t, "ramjet_disk_loaded_objects"); v >= 60 {
		t.Fatalf("ramjet_disk_loaded_objects = %v: the test needs pages left on disk only", v)
	}
	mustStatus(t, adminPost(t, n.c, n.rj, "tag="+ns+"-by-tag", "", ""), http.StatusOK, "purge by tag")
	r, err := tryDo(n.c, "PURGE", n.rj.URL+page30K(ns, "by-url", ns+"-by-url"), nil, "Host: disk.test")
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, r, http.StatusOK, "PURGE by URL")
	for _, name := range []string{"by-tag", "by-url"} {
		r := n.get(t, page30K(ns, name, ns+"-"+name))
		mustMissStored(t, r, "the page purged by "+strings.TrimPrefix(name, "by-")+" while only on disk")
		if r.ID() == first[name].ID() {
			t.Fatalf("%s: the purged body served", name)
		}
	}
	kept := n.get(t, page30K(ns, "kept", ns+"-kept"))
	mustFreshHit(t, kept, "a page only on disk that no purge names")
	if kept.ID() != first["kept"].ID() {
		t.Fatalf("kept: body id %q, want the stored %q", kept.ID(), first["kept"].ID())
	}
}

// ramjet check refuses a cache.disk.path the service could not use, at
// the line that sets it.
func TestCheckRejectsABadDiskPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none"), "no such file or directory"},
		{"a file", file, "is not a directory"},
		{"relative", "var/cache/ramjet", "must be an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testbed.WriteConfig(t, "", fmt.Sprintf("listen: 127.0.0.1:0\ncache:\n  disk:\n    path: %q\n    size: 64MiB\n", tt.path))
			code, out := testbed.RunRamjet(t, 20*time.Second, "check", "--config", cfg)
			if want := "ramjet.yaml:4: cache.disk.path: "; code == 0 || !strings.Contains(out, want) || !strings.Contains(out, tt.want) {
				t.Fatalf("check: exit %d\n%s\nwant a failure with %q and %q", code, out, want, tt.want)
			}
		})
	}
}

// Run as the service's user (as the unit's ExecStartPre runs it), check
// refuses a directory that user cannot write, and one whose objects/ an
// earlier run as another user (root) left to that user.
func TestCheckRejectsADiskPathTheServiceUserCannotWrite(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testbed.Skip(t, "running check as another user needs root")
	}
	bin := asServiceUser(t, "daemon", "")
	rootOwned := testbed.PublicDir(t)
	objectsRootOwned := testbed.PublicDir(t)
	if out, err := exec.Command("chown", "daemon:daemon", objectsRootOwned).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(objectsRootOwned, "objects", "ab"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"not writable", rootOwned, "not writable"},
		{"objects left by root", objectsRootOwned, "objects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := fmt.Sprintf("listen: 127.0.0.1:0\ncache:\n  disk:\n    path: %q\n    size: 64MiB\n", tt.path)
			cfg := publicConfig(t, testbed.WriteConfig(t, "", yaml))
			out, err := exec.Command(bin, "check", "--config", cfg).CombinedOutput()
			if want := "ramjet.yaml:4: cache.disk.path: "; err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), tt.want) {
				t.Fatalf("check as daemon: %v\n%s\nwant a failure with %q and %q", err, out, want, tt.want)
			}
		})
	}
}

// dirBytes is the bytes of the entry files under dir's objects/.
func dirBytes(t *testing.T, dir string) (int64, int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "objects", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil { // gone meanwhile: evicted
			n += st.Size()
		}
	}
	return n, len(files)
}

// A site with cache_size 1MiB of a 4MiB cache.size has a quarter of the
// 8MiB disk tier, 2MiB, of its own: its 3.6 MB of pages never hold more
// there, never push the other sites' files off the disk, and the newest
// of them are hits from its share, before and after a restart.
func TestDiskTierSiteShareIsBoundedAndKeptApart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := startDiskNodeWith(t, dir, "  size: 4MiB\n  max_object_size: 256KiB\nhosts:\n  - names: [share.test]\n    cache_size: 1MiB\n")
	n.cfg = testbed.WriteConfig(t, filepath.Dir(n.cfg), strings.Replace(mustRead(t, n.cfg), "size: 64MiB", "size: 8MiB", 1))
	n.restart(t)
	ns := nsFor(t)
	n.fillPages(t, ns, pageNames("shared", 10))
	share := func(name string) result {
		return get(t, n.c, n.rj.URL+page30K(ns, name, ns+"-"+name), "Host: share.test")
	}
	names := pageNames("own", 120)
	for _, name := range names {
		mustMissStored(t, share(name), "share.test: first request of "+name)
	}
	shareDir := filepath.Join(dir, "sites", "share.test")
	const bound = 2<<20 + 32<<10 // the bound, and the one file written past it before the oldest go
	filled := testbed.Poll(testbed.StopTimeout, func() bool {
		b, _ := dirBytes(t, shareDir)
		if b > bound {
			t.Fatalf("share.test holds %d bytes on disk, over its 2MiB share", b)
		}
		return b > 3<<19 // 1.5 MiB: it filled its share
	})
	if !filled {
		b, files := dirBytes(t, shareDir)
		t.Fatalf("share.test holds %d bytes in %d files on disk: its share was never filled", b, files)
	}
	if _, files := dirBytes(t, dir); files != 10 {
		t.Errorf("%d files in the shared tier, want the other site's 10 only", files)
	}
	for round, restart := range []bool{false, true} {
		if restart {
			n.restart(t)
		}
		for _, name := range names[len(names)-40:] { // 1.2 MB: more than its RAM
			mustFreshHit(t, share(name), fmt.Sprintf("round %d: share.test %s", round+1, name))
		}
	}
}

// An upgrade (SIGUSR2) with the disk tier: the new process loads the
// files as after a clean stop, so the pages stay fresh hits and the
// origin is not asked again; a purge the old process applies while the
// new one serves (here an origin's purge header on a request in flight)
// reaches the new one through the old one's handover journal.
func TestUpgradeWithTheDiskTierKeepsPagesFreshAndHonoursThePurgesOfTheOldProcess(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	u, _ := startUpgradableDisk(t, o)
	ns := nsFor(t)
	pages := cacheOnDisk(t, u, ns, "kept", "purged")
	// A request in flight at the old process when the new one serves,
	// whose answer purges a page: the old process applies that purge
	// after the new one loaded the files.
	purger := slowRequest(t, u, o, ns, 2500, "X-LiteSpeed-Purge: tag="+ns+"-purged")
	oldPid := u.cmd.Process.Pid
	u.upgradeWithRequestInFlight(t)
	if err := <-purger; err != nil {
		t.Fatalf("the purging request: %v", err)
	}
	if !u.exited(15 * time.Second) {
		t.Fatalf("the old process %d still runs 15 s after SIGUSR2", oldPid)
	}
	// The new process follows the journal every 10 ms.
	if !testbed.Poll(2*time.Second, func() bool {
		return !get(t, newClient(t), u.url+page30K(ns, "purged", ns+"-purged")).CacheStatus().FreshHit()
	}) {
		t.Fatal("the page the old process purged is still a fresh hit of the new one")
	}
	kept := get(t, newClient(t), u.url+page30K(ns, "kept", ns+"-kept"))
	mustFreshHit(t, kept, "a page cached before the upgrade")
	if kept.ID() != pages["kept"].ID() {
		t.Fatalf("kept: body id %q, want the stored %q", kept.ID(), pages["kept"].ID())
	}
	if got := o.loggedRequests(t, "/e/"+ns+"/kept"); got != 1 {
		t.Errorf("origin asked %d times for the kept page, want once (before the upgrade)", got)
	}
}

// A reload that takes a site's cache_size away drops its share on disk
// with its files once the old generation drained: purges of the site no
// longer reach them, so they must never be loaded again.
func TestDiskTierShareDroppedByAReloadLeavesNoFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := startDiskNodeWith(t, dir, "hosts:\n  - names: [share.test]\n    cache_size: 1MiB\n")
	ns := nsFor(t)
	for _, name := range pageNames("own", 3) {
		mustMissStored(t, get(t, n.c, n.rj.URL+page30K(ns, name, ns+"-"+name), "Host: share.test"), "share.test: "+name)
	}
	shareDir := filepath.Join(dir, "sites", "share.test")
	if !testbed.Poll(testbed.StopTimeout, func() bool { _, files := dirBytes(t, shareDir); return files == 3 }) {
		_, files := dirBytes(t, shareDir)
		t.Fatalf("share.test has %d files on disk, want 3", files)
	}
	testbed.WriteConfig(t, filepath.Dir(n.cfg), fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", dir))
	n.rj.Signal(t, syscall.SIGHUP)
	if !testbed.Poll(testbed.StopTimeout, func() bool { _, err := os.Stat(shareDir); return os.IsNotExist(err) }) {
		_, files := dirBytes(t, shareDir)
		t.Fatalf("share.test's directory still holds %d files after the reload dropped its cache_size", files)
	}
}
