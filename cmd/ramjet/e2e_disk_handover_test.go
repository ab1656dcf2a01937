package main_test

import (
	"fmt"
	"net/http"
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
	cfg = testbed.WriteConfig(t, "", fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", t.TempDir()))
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
