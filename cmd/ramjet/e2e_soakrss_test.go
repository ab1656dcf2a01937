package main_test

// What the soak found: a purge must reach every process of a node,
// including an old one still answering its kept connections during an
// upgrade.

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// keptConn is a keep-alive connection to the main listener, opened
// before an upgrade: the old process answers what is sent on it.
type keptConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialKept(t *testing.T, base string) *keptConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() }) // test teardown
	return &keptConn{c: c, r: bufio.NewReader(c)}
}

// get sends one GET for target and reads its answer.
func (k *keptConn) get(target string) (result, error) {
	_ = k.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(k.c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, k.c.RemoteAddr()); err != nil {
		return result{}, err
	}
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&b)
	return result{Status: resp.StatusCode, Header: resp.Header, Body: []byte(b.String())}, err
}

// An upgrade runs two processes of one node for a moment: the old one
// answers the connections it kept, the new one all others. A purge the
// new one takes through the admin API is published on the Redis stream
// under the node's name; the old one must apply it too, not take it for
// its own echo and serve the purged page fresh until it exits (the
// soak's lost purge: "node b serves v=N after purging via b").
func TestUpgradeOldProcessAppliesAPurgeTheNewOneTook(t *testing.T) {
	t.Parallel()
	r := testbed.StartRedis(t)
	o := startOrigin(t)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("cache:\n  disk:\n    path: %q\n    size: 64MiB\n", t.TempDir()))
	u := startUpgradable(t, "--origin", o.URL, "--config", cfg, "--redis", r.URL, "--node", "one")
	ns := nsFor(t)
	page := page30K(ns, "p", ns+"-p")
	c := newClient(t)
	mustMissStored(t, get(t, c, u.url+page), "first request")
	// Kept connections, each asked once now: after the upgrade each is
	// one more answer of the old process (then it closes it).
	kept := make([]*keptConn, 30)
	for i := range kept {
		kept[i] = dialKept(t, u.url)
		res, err := kept[i].get(page)
		if err != nil {
			t.Fatal(err)
		}
		mustFreshHit(t, res, "the page on a kept connection before the upgrade")
	}
	if err := u.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	if !testbed.Poll(5*time.Second, func() bool { return u.healthPid() != u.cmd.Process.Pid && u.healthPid() != 0 }) {
		t.Fatalf("no upgrade within 5 s:\n%s", u.output())
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).
		PostForm(u.admin+"/purge", url.Values{"tag": {ns + "-p"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("purge through the new process: status %d", resp.StatusCode)
	}
	if res := get(t, newClient(t), u.url+page); res.CacheStatus().FreshHit() {
		t.Fatalf("the new process still serves the page it purged: %q", res.CacheStatus().Raw)
	}
	// The old process reads the stream as fast as any other node does:
	// one kept connection asked every 50 ms.
	var last result
	for i, k := range kept {
		res, err := k.get(page)
		if err != nil {
			t.Fatalf("kept connection %d: %v (the old process ended before it applied the purge?)", i, err)
		}
		if !res.CacheStatus().FreshHit() {
			return
		}
		last = res
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the old process still serves the purged page fresh %v after the purge (%q): it took the new process's purge for its own echo",
		time.Duration(len(kept))*50*time.Millisecond, last.CacheStatus().Raw)
}
