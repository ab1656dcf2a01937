package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// An admin listener ramjet top reads may be hostile: a tenant's process
// that took 127.0.0.1:9090 while ramjet restarted, or a node of another
// operator. The names and error bodies it sends reach the terminal with
// their control characters shown as text: an OSC 2 in a site's name does
// not retitle the window and a CSI in a pool's name does not clear the
// screen (before, the terminal obeyed both: tmux's pane title became
// "pwned" and the rows above the pool were wiped).
func TestTopShowsAHostileListenersControlCharactersAsText(t *testing.T) {
	t.Parallel()
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stats":
			w.Write([]byte(`{"sites":[{"site":"a.test\u001b]2;pwned\u0007","totals":{"requests":5},"minute":{"requests":5}},` + //nolint:errcheck // test server
				`{"site":"b.test","totals":{"requests":1},"minute":{}}]}`))
		case "/php/status":
			w.Write([]byte(`{"pools":[{"name":"pool\u001b[2J\u001b[H","queued":0,"workers":[]}]}`)) //nolint:errcheck // test server
		case "/metrics":
			w.Write([]byte("ramjet_client_connections 1\n")) //nolint:errcheck // test server
		}
	}))
	defer fake.Close()
	tm := startTmuxTop(t, "--admin", fake.URL)
	s := tm.waitScreen("both sites and the pool", func(s string) bool {
		return strings.Contains(s, "b.test") && strings.Contains(s, "PHP POOL")
	})
	t.Logf("ramjet top against the hostile listener:\n%s", s)
	if title := strings.TrimSpace(tm.run("display-message", "-p", "-t", "top", "#{pane_title}")); title == "pwned" {
		t.Errorf("a site's name retitled the terminal to %q", title)
	}
	if !strings.Contains(s, `a.test\x1b]2;pwned\x07`) || !strings.Contains(s, `pool\x1b[2J\x1b[H`) {
		t.Errorf("the names are not shown with their escapes as text:\n%s", s)
	}
	if !strings.HasPrefix(s, "ramjet top") {
		t.Errorf("the pool's name cleared the screen above it:\n%s", s)
	}
}

// ramjet top reads the admin address and the operator's token from the
// config (--config), as reopen-logs does, so that the token is on no
// command line: every local user, each tenant of a shared host, can read
// any process's arguments (/proc/PID/cmdline, ps). Before, --token was
// the only way (ramjet top --config: "flag provided but not defined",
// the session ended).
func TestTopTakesTheTokenFromTheConfig(t *testing.T) {
	t.Parallel()
	o := startOrigin(t)
	rj := testbed.NewRamjet(t)
	cfg := testbed.WriteConfig(t, "", fmt.Sprintf("admin:\n  listen: %q\n  token: %s\nhosts:\n  - names: [a.test]\n",
		rj.AdminAddr, operatorToken))
	rj.Start(t, "--origin", o.URL, "--config", cfg)
	c := newClient(t)
	get(t, c, rj.URL+"/e/"+nsFor(t)+"/plain", "Host: a.test")
	tm := startTmuxTop(t, "--config", cfg)
	s := tm.waitScreen("a.test's row", func(s string) bool { return topRow(s, "a.test") != nil })
	if strings.Contains(s, "error:") {
		t.Errorf("ramjet top --config could not read the stats:\n%s", s)
	}
	pid := strings.TrimSpace(tm.run("display-message", "-p", "-t", "top", "#{pane_pid}"))
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), operatorToken) {
		t.Errorf("the operator's token is on ramjet top's command line: %q", cmdline)
	}
}

// An admin listener that answers without end (a tenant's process on the
// port while ramjet restarts) fills no more than a bounded part of ramjet
// top's memory: it shows the error and keeps running. Before, top read
// the answer whole and its peak RSS grew with what the listener sent.
func TestTopBoundsAHostileListenersAnswer(t *testing.T) {
	t.Parallel()
	var served atomic.Int32
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Write([]byte(`{"sites":[{"site":"`)) //nolint:errcheck // test server
		chunk := []byte(strings.Repeat("a", 1<<20))
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer fake.Close()
	tm := startTmuxTop(t, "--admin", fake.URL)
	tm.waitScreen("the error", func(s string) bool { return strings.Contains(s, "error:") })
	if !testbed.Poll(30*time.Second, func() bool { return served.Load() >= 4 }) { // each refresh reads the endless answer
		t.Fatalf("ramjet top asked %d times in 30 s, want 4 refreshes", served.Load())
	}
	pid := strings.TrimSpace(tm.run("display-message", "-p", "-t", "top", "#{pane_pid}"))
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var peak int
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Sscan(v, &peak)
		}
	}
	t.Logf("ramjet top's peak RSS: %d KiB\n%s", peak, tm.screen())
	if peak == 0 || peak > 100<<10 {
		t.Errorf("ramjet top's peak RSS is %d KiB, want under 100 MiB", peak)
	}
}
