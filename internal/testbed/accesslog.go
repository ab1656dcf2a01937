package testbed

import (
	"bufio"
	"crypto/rand"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The origins testbed starts (nginx, Apache) write an access log of their
// own in the "counts" format: method, request URI as sent, status, one
// request a line. These read it.

// countRequests counts the lines of the access log file whose request
// path (the URI before any '?') equals path; a missing log counts 0.
func countRequests(file, path string) int {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	count := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text()) // method, URI, status
		if len(fields) < 2 {
			continue
		}
		if p, _, _ := strings.Cut(fields[1], "?"); p == path {
			count++
		}
	}
	return count
}

// waitRequests polls requests(path) until it reaches atLeast or 5 s
// pass, then syncs the log (sync) and returns the count.
func waitRequests(t testing.TB, requests func(string) int, sync func(testing.TB), path string, atLeast int) int {
	t.Helper()
	Poll(5*time.Second, func() bool { return requests(path) >= atLeast })
	sync(t)
	return requests(path)
}

// syncLog requests a path of its own from the server at url (name, for
// messages) and returns once requests counts it.
func syncLog(t testing.TB, name, url string, requests func(string) int) {
	t.Helper()
	path := "/__testbed_sync/" + rand.Text()
	c := &http.Client{Timeout: 5 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Get(url + path)
	if err != nil {
		t.Fatalf("testbed: %s log sync request: %v", name, err)
	}
	resp.Body.Close()
	if !Poll(5*time.Second, func() bool { return requests(path) == 1 }) {
		t.Fatalf("testbed: %s did not log its sync request %s within 5 s", name, path)
	}
}
