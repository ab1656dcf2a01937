package main_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// startUpgradableDisk starts an upgradable ramjet in front of o with a
// disk tier; cfg is its config file, for another process on the same
// files.
func startUpgradableDisk(t *testing.T, o *origin) (u *upgradable, cfg string) {
	t.Helper()
	return startUpgradableDiskAt(t, o, t.TempDir())
}

// startUpgradableDiskAt is startUpgradableDisk with the tier in dir.
func startUpgradableDiskAt(t *testing.T, o *origin, dir string) (u *upgradable, cfg string) {
	t.Helper()
	cfg = testbed.WriteConfig(t, "", fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", dir))
	return startUpgradable(t, "--origin", o.URL, "--config", cfg), cfg
}

// After an upgrade's handover the directory of the disk tier is the new
// process's: it loaded the files, and only the purges of its own index
// reach them. A page the old process stores while it drains (a request
// it had in flight) must not land there as a file the new process does
// not know: a purge would then miss it, and the next start would load
// the purged page as a fresh hit. (Found by the soak: node B served a
// purged page for 10 s after a restart that came soon after an upgrade.)
func TestUpgradeOldProcessDrainingWritesNoFileTheNewOneCannotPurge(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	u, cfg := startUpgradableDisk(t, o)
	ns := nsFor(t)
	late := "/e/" + ns + "/late?mark=" + ns + "-late&sleep_ms=1500&" + hq("Cache-Control: max-age=300", "X-LiteSpeed-Tag: "+ns+"-late")
	const host = "Host: handover.test" // the same key whatever port each process has
	type outcome struct {
		r   result
		err error
	}
	inFlight := make(chan outcome, 1)
	go func() {
		r, err := tryDo(newClient(t), http.MethodGet, u.url+late, nil, host)
		inFlight <- outcome{r, err}
	}()
	if !testbed.Poll(5*time.Second, func() bool { return o.marked(ns + "-late") }) {
		t.Fatal("the slow request never reached the origin")
	}
	oldPid := u.cmd.Process.Pid
	u.upgradeWithRequestInFlight(t)
	got := <-inFlight
	if got.err != nil {
		t.Fatalf("the request in flight: %v", got.err)
	}
	mustMissStored(t, got.r, "the request the old process had in flight")
	if !u.exited(15 * time.Second) {
		t.Fatalf("the old process %d still runs 15 s after SIGUSR2", oldPid)
	}
	newPid := u.healthPid()
	if newPid == 0 || newPid == oldPid {
		t.Fatalf("/healthz names pid %d after the upgrade (old %d)", newPid, oldPid)
	}
	// The new process purges the page's tag (an origin's purge header).
	mustStatus(t, get(t, newClient(t), u.url+"/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: tag="+ns+"-late"), host), http.StatusOK, "the purging request")
	// A restart: the new process stops cleanly, another loads the files.
	if err := syscall.Kill(newPid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !testbed.Poll(10*time.Second, func() bool { return !alive(newPid) }) {
		t.Fatalf("the upgraded process %d did not exit within 10 s of SIGTERM", newPid)
	}
	next := startUpgradable(t, "--origin", o.URL, "--config", cfg)
	after := get(t, newClient(t), next.url+late, host)
	mustNotFreshOld(t, after, got.r, "the purged page after the restart")
}

// cacheOnDisk stores each named page (page30K) and waits until the tier
// holds them all, as files the next process loads.
func cacheOnDisk(t *testing.T, u *upgradable, ns string, names ...string) map[string]result {
	t.Helper()
	c := newClient(t)
	pages := map[string]result{}
	for _, name := range names {
		pages[name] = get(t, c, u.url+page30K(ns, name, ns+"-"+name))
		mustMissStored(t, pages[name], "first request of "+name)
	}
	want := float64(len(names))
	if !testbed.Poll(testbed.StopTimeout, func() bool { return metricValue(t, u.admin, "ramjet_disk_objects") == want }) {
		t.Fatalf("ramjet_disk_objects = %v, want %v", metricValue(t, u.admin, "ramjet_disk_objects"), want)
	}
	return pages
}

// slowRequest sends a request the origin answers after ms, with the
// given response fields, and returns its outcome when it comes; it
// returns once the origin has the request.
func slowRequest(t *testing.T, u *upgradable, o *origin, ns string, ms int, fields ...string) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	mark := ns + "-slow"
	go func() {
		_, err := tryDo(newClient(t), http.MethodGet, fmt.Sprintf("%s/e/%s/slow?mark=%s&sleep_ms=%d&%s", u.url, ns, mark, ms, hq(fields...)), nil)
		done <- err
	}()
	if !testbed.Poll(5*time.Second, func() bool { return o.marked(mark) }) {
		t.Fatal("the slow request never reached the origin")
	}
	return done
}

// fillFilesystem writes into dir until its filesystem is full.
func fillFilesystem(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for range 1 << 14 { // at most 1 GiB
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the filesystem never filled")
}

// An old process that cannot journal a purge while it drains (its disk
// is full) leaves the new one unable to know what it purges: the new
// process must treat its cache as a gap (stale until refreshed), at
// once and again when the old one ended, never go on serving the purged
// page as fresh.
func TestUpgradeOldProcessThatCannotJournalAPurgeLeavesTheNewOneAGap(t *testing.T) {
	t.Parallel()
	dir := smallFilesystem(t)
	o := startOrigin(t)
	u, _ := startUpgradableDiskAt(t, o, dir)
	ns := nsFor(t)
	before := cacheOnDisk(t, u, ns, "kept", "purged")
	// The old process has a request in flight whose answer purges a
	// page; before that answer comes, its disk is full.
	purger := slowRequest(t, u, o, ns, 4000, "X-LiteSpeed-Purge: tag="+ns+"-purged")
	oldPid := u.cmd.Process.Pid
	u.upgradeWithRequestInFlight(t)
	fillFilesystem(t, dir)
	if err := <-purger; err != nil {
		t.Fatalf("the purging request: %v", err)
	}
	if !strings.Contains(u.output(), "a purge did not reach the handover journal") {
		t.Fatalf("the old process journaled the purge: the disk filled too late for this test (a slow upgrade?)\n%s", u.output())
	}
	// Stale while refreshed, or refreshed already (the gap's warm-up).
	if !testbed.Poll(2*time.Second, func() bool {
		return !freshOld(get(t, newClient(t), u.url+page30K(ns, "purged", ns+"-purged")), before["purged"])
	}) {
		t.Fatal("the page the old process purged is still a fresh hit of the new one")
	}
	if !u.exited(15 * time.Second) {
		t.Fatalf("the old process %d still runs 15 s after SIGUSR2", oldPid)
	}
	if !testbed.Poll(2*time.Second, func() bool { return strings.Count(u.output(), "upgrade: the cache is treated as a gap") == 2 }) {
		t.Fatalf("want the gap applied twice, when the journal broke and when the old process ended:\n%s", u.output())
	}
}

// A journal line the new process cannot read (a torn write, a damaged
// disk) may be a purge it misses: the cache is a gap from then on.
func TestUpgradeJournalLineTheNewProcessCannotReadLeavesItAGap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := startOrigin(t)
	u, _ := startUpgradableDiskAt(t, o, dir)
	ns := nsFor(t)
	before := cacheOnDisk(t, u, ns, "kept")
	slow := slowRequest(t, u, o, ns, 4000)
	u.upgradeWithRequestInFlight(t)
	mustFreshHit(t, get(t, newClient(t), u.url+page30K(ns, "kept", ns+"-kept")), "a page cached before the upgrade")
	f, err := os.OpenFile(filepath.Join(dir, "handover.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatalf("the journal while the old process drains: %v", err)
	}
	_, err = f.WriteString("{\"cmd\": torn\n")
	if err = errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	if !testbed.Poll(2*time.Second, func() bool {
		return !freshOld(get(t, newClient(t), u.url+page30K(ns, "kept", ns+"-kept")), before["kept"])
	}) {
		t.Fatalf("a page is still a fresh hit after the journal broke:\n%s", u.output())
	}
	if err := <-slow; err != nil {
		t.Fatalf("the request in flight: %v", err)
	}
}

// freshOld reports whether r is a fresh hit of old's body.
func freshOld(r, old result) bool { return r.CacheStatus().FreshHit() && r.ID() == old.ID() }

// Without a disk tier the new process starts empty, but a page it
// caches can still be purged at the old one while that one lingers: a
// client's next request on a connection the old process kept (here an
// origin's purge header in its answer) must reach the new process
// through the old one's journal.
func TestUpgradeWithoutADiskTierHonoursAPurgeTheOldProcessAppliesWhileItDrains(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	u := startUpgradable(t, "--origin", o.URL)
	ns := nsFor(t)
	kept := dialRaw(t, strings.TrimPrefix(u.url, "http://"))
	if r := kept.get(t, "/e/"+ns+"/hello"); r.StatusCode != http.StatusOK {
		t.Fatalf("a request on the kept connection: %s", r.Status)
	}
	slow := slowRequest(t, u, o, ns, 3000)
	u.upgradeWithRequestInFlight(t)
	page := u.url + page30K(ns, "p", ns+"-p")
	const host = "Host: conns.test" // the kept connection's: the purge is the site's
	cached := get(t, newClient(t), page, host)
	mustMissStored(t, cached, "the page, first asked of the new process")
	mustFreshHit(t, get(t, newClient(t), page, host), "the page, again")
	// The old process answers the kept connection once more, and purges.
	if r := kept.get(t, "/e/"+ns+"/purger?"+hq("X-LiteSpeed-Purge: tag="+ns+"-p")); r.StatusCode != http.StatusOK {
		t.Fatalf("the purging request on the kept connection: %s", r.Status)
	}
	if !testbed.Poll(2*time.Second, func() bool { return !freshOld(get(t, newClient(t), page, host), cached) }) {
		t.Fatalf("the page the old process purged is still a fresh hit of the new one:\n%s", u.output())
	}
	if err := <-slow; err != nil {
		t.Fatalf("the request in flight: %v", err)
	}
}
