package main_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestRequestsThatCameWhileRamjetCouldNotRunAreReadNotParked: keep-alive
// clients whose next requests reach their sockets while ramjet's one
// core is busy elsewhere (here: ramjet stopped longer than the
// connections' linger) are answered on their connections without being
// parked and woken. On resume Go's poller hands over at most 128 ready
// sockets at a time and runs the expired linger deadlines first; before,
// every connection past those 128 was parked with its request waiting
// (a dozen system calls, and a wait behind every other connection in the
// run queue), now its request is read there and then.
func TestRequestsThatCameWhileRamjetCouldNotRunAreReadNotParked(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		io.WriteString(w, "page "+r.URL.Path)
	}))
	defer origin.Close()
	rj := testbed.NewRamjet(t)
	rj.Env = []string{"GOMAXPROCS=1"}
	rj.Start(t, "--origin", origin.URL)
	const n = 200 // more than the 128 sockets one poll hands over
	clients := make([]*rawConn, n)
	for i := range clients {
		clients[i] = dialRaw(t, rj.Addr)
	}
	// Each round's requests come after every connection parked: its
	// linger doubles from 20 ms to a second (MaxLinger), so that none
	// parks in the moment before ramjet is stopped.
	parks := `ramjet_client_connection_parks_total{listener="main"}`
	for round := range 7 {
		askAll(t, clients)
		if round < 6 {
			waitParked(t, rj, n)
		}
	}
	before := metricValue(t, rj.AdminURL, parks)
	rj.Freeze(t)
	time.Sleep(1100 * time.Millisecond) // ramjet cannot run for longer than the linger: every deadline has passed at resume
	for i, c := range clients {
		if _, err := io.WriteString(c.c, "GET /own/"+strconv.Itoa(i)+" HTTP/1.1\r\nHost: conns.test\r\n\r\n"); err != nil {
			rj.Thaw(t)
			t.Fatalf("client %d: %v", i, err)
		}
	}
	rj.Thaw(t)
	for i, c := range clients {
		_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || string(b) != "page /own/"+strconv.Itoa(i) {
			t.Fatalf("client %d: %d %q %v", i, resp.StatusCode, b, err)
		}
	}
	late := metricValue(t, rj.AdminURL, `ramjet_client_connection_late_reads_total{listener="main"}`)
	if got := metricValue(t, rj.AdminURL, parks) - before; got != 0 || late == 0 {
		t.Fatalf("%v connections parked with their request waiting, %v late reads; want none parked, some read late", got, late)
	}
}

// askAll has every client ask for its own page at once.
func askAll(t *testing.T, clients []*rawConn) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/own/" + strconv.Itoa(i)
			resp, err := c.getBody(path)
			if err == nil && (resp.status != 200 || resp.body != "page "+path) {
				err = fmt.Errorf("client %d asked for %s: %d %q", i, path, resp.status, resp.body)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
