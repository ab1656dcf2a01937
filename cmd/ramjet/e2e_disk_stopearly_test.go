package main_test

// A SIGTERM that reaches ramjet before it serves (while the disk tier
// loads, or in the moment after /healthz first answers, as a test or an
// admin's stop right after a start does) is a clean stop: ramjet finishes
// what it started, drains and leaves the disk tier's clean-shutdown
// marker. Before, such a signal took its default action and killed the
// process (exit status -1 in TestDiskTierFanOutNodeWhoseStreamWasLost…,
// once, under load): the next start found no marker and treated every
// page loaded as a crash's.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestSIGTERMDuringTheDiskTiersLoadStopsCleanly(t *testing.T) {
	const pages, size = 20, 32 << 10
	body := incompressible(size)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		w.Write(body) //nolint:errcheck // the test's own origin
	}))
	defer origin.Close()
	dir := t.TempDir()
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", dir))
	rj := testbed.StartRamjet(t, "--origin", origin.URL, "--config", cfg)
	c := newClient(t)
	for i := range pages {
		mustMissStored(t, get(t, c, fmt.Sprintf("%s/p/%d", rj.URL, i)), "caching a page")
	}
	if !testbed.Poll(testbed.StopTimeout, func() bool { return metricValue(t, rj.AdminURL, "ramjet_disk_written_total") >= pages }) {
		t.Fatal("the pages were never written to disk")
	}
	rj.Signal(t, syscall.SIGTERM)
	if code := rj.Wait(t, testbed.StopTimeout); code != 0 {
		t.Fatalf("exit status %d after SIGTERM:\n%s", code, rj.Output())
	}
	for _, f := range cacheFiles(t, dir) {
		dropFromPageCache(t, f)
	}

	// The next start reads the files at 256 KB/s: the load takes seconds.
	// The process is in the slow cgroup from its exec on.
	ports := testbed.FreePorts(t, 2)
	var out strings.Builder
	cmd := exec.Command("/bin/sh", "-c", `echo $$ >"$0" && exec "$@"`, slowReads(t, dir, 256<<10), testbed.Binary(t),
		"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", ports[0]), "--admin", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"--origin", origin.URL, "--config", cfg)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // exited already unless the test failed
		<-exited
	})
	reading := func() bool { n, _ := tierFilesOpen(cmd.Process.Pid, dir); return n > 0 } // the load reads them one by one
	if !testbed.Poll(5*time.Second, reading) {
		t.Fatal("ramjet was never seen reading the tier's files")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("SIGTERM while the disk tier loaded: %v (exit status %d), not a clean stop:\n%s", err, cmd.ProcessState.ExitCode(), &out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ramjet did not stop within 30 s of a SIGTERM while the disk tier loaded")
	}
	if _, err := os.Stat(filepath.Join(dir, "clean")); err != nil {
		t.Fatalf("no clean-shutdown marker after the stop (%v): the next start would read it as a crash", err)
	}
}
