package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// A reload that adds docroot sites, one of which cannot start its PHP
// workers (its binary exits at once), is refused as a whole: the running
// config serves on, and ramjet keeps nothing the refused one made — no
// docroot directory open, no PHP process, no metric series of a site
// that never served.
func TestRefusedReloadLeavesNothingOfItsSitesBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := testbed.WriteConfig(t, dir, "defaults:\n  default_ttl: 60s\n")
	rj := startRamjet(t, startOrigin(t).URL, "--config", path)
	c := newClient(t)
	mustMissStored(t, get(t, c, rj.URL+"/e/generation-a"), "GET before the reload")

	good, bad := phpDocroot(t), phpDocroot(t)
	exits := filepath.Join(testbed.PublicDir(t), "php-cgi")
	if err := os.WriteFile(exits, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	offset := len(rj.Output())
	testbed.WriteConfig(t, dir, fmt.Sprintf(`defaults:
  default_ttl: 60s
hosts:
  - names: [good.test]
    cache_size: 4MiB
    docroot:
      root: %q
      php:
        workers: 1
        shared_user: true
  - names: [bad.test]
    docroot:
      root: %q
      php:
        binary: %q
        workers: 1
        shared_user: true
`, good, bad, exits))
	rj.Signal(t, syscall.SIGHUP) // or the watcher first: the same file is refused once
	// Logged once proxy.Reload returned, and so once the refused
	// generation was undone.
	rj.WaitOutput(t, offset, "proxy: reload: proxy: php pool bad.test", 20*time.Second)

	mustFreshHit(t, get(t, c, rj.URL+"/e/generation-a"), "GET after the refused reload")
	for _, root := range []string{good, bad} {
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			t.Fatal(err)
		}
		if hasOpen(rj.Pid(), real) {
			t.Errorf("ramjet still holds the refused site's docroot %s open", real)
		}
	}
	if kids := testbed.Children(rj.Pid()); len(kids) != 0 {
		t.Errorf("processes of the refused config still run: %+v", kids)
	}
	metrics := string(get(t, c, rj.AdminURL+"/metrics").Body)
	for _, site := range []string{"good.test", "bad.test"} {
		if strings.Contains(metrics, fmt.Sprintf("site=%q", site)) {
			t.Errorf("/metrics has series of %s, which never served", site)
		}
	}
}
