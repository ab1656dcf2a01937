package main_test

// A page only on disk, once sent from its file, stays open with its
// parsed head for the next hits (as nginx's open_file_cache keeps its
// cache files): the next hits are sent from the same descriptor, and the
// descriptor is closed, and its copy never sent again, when a purge
// takes the page.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// keptFiles is how many of ramjet's descriptors are files of the disk
// tier in dir.
func keptFiles(t *testing.T, rj *testbed.Ramjet, dir string) int {
	t.Helper()
	n, err := tierFilesOpen(rj.Pid(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tierFilesOpen is how many of process pid's descriptors are files of
// the disk tier in dir.
func tierFilesOpen(pid int, dir string) (int, error) {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(fds)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fds, e.Name()))
		if err == nil && strings.HasPrefix(target, filepath.Join(dir, "objects")+"/") {
			n++
		}
	}
	return n, nil
}

func TestDiskPageKeptOpenIsSentAgainFromItsDescriptorAndNeverAfterItsPurge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := startDiskNodeWith(t, dir, smallRAM)
	ns := nsFor(t)
	targets := []string{"purged", "kept"}
	first := n.fillPages(t, ns, append(targets, pageNames("filler", 60)...))
	n.restart(t) // loads the newest files up to 1 MiB: the targets stay on disk only
	if v := n.metric(t, "ramjet_disk_loaded_objects"); v >= 60 {
		t.Fatalf("ramjet_disk_loaded_objects = %v: the test needs pages left on disk only", v)
	}
	page := func(name string) string { return page30K(ns, name, ns+"-"+name) }
	for round := range 3 {
		for _, name := range targets {
			r := n.get(t, page(name))
			mustFreshHit(t, r, fmt.Sprintf("round %d: %s from disk", round+1, name))
			if r.ID() != first[name].ID() {
				t.Fatalf("%s: body id %q, want the stored %q", name, r.ID(), first[name].ID())
			}
		}
	}
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != 6 {
		t.Fatalf("ramjet_disk_sendfile_total = %v after 6 hits from disk over HTTP/1.1, want 6", v)
	}
	// The answers ended: the two files stay open for the next hits.
	if got := keptFiles(t, n.rj, dir); got != 2 {
		t.Fatalf("%d of the tier's files open after the answers, want the 2 sent kept open", got)
	}
	if v := n.metric(t, "ramjet_disk_open_files"); v != 2 {
		t.Fatalf("ramjet_disk_open_files = %v, want 2", v)
	}

	mustStatus(t, adminPost(t, n.c, n.rj, "tag="+ns+"-purged", "", ""), http.StatusOK, "purge by tag")
	r := n.get(t, page("purged"))
	mustMissStored(t, r, "the page purged while its file was kept open")
	if r.ID() == first["purged"].ID() {
		t.Fatal("the purged body was sent from its kept descriptor")
	}
	// The purged file's descriptor is closed once the writer deleted it.
	if !testbed.Poll(testbed.StopTimeout, func() bool { return keptFiles(t, n.rj, dir) == 1 }) {
		t.Fatalf("%d of the tier's files open after the purge, want the 1 not purged", keptFiles(t, n.rj, dir))
	}
	kept := n.get(t, page("kept"))
	mustFreshHit(t, kept, "the page no purge names, from its kept descriptor")
	if kept.ID() != first["kept"].ID() {
		t.Fatalf("kept: body id %q, want the stored %q", kept.ID(), first["kept"].ID())
	}
	if v := n.metric(t, "ramjet_disk_sendfile_total"); v != 7 {
		t.Fatalf("ramjet_disk_sendfile_total = %v, want 7", v)
	}
}
