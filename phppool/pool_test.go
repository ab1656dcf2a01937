package phppool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const phpCGIPath = "/usr/bin/php-cgi"

const poolScript = `<?php
if (isset($_GET['ms'])) { usleep((int)$_GET['ms'] * 1000); }
if (isset($_GET['code'])) { http_response_code((int)$_GET['code']); }
echo getmypid(), ' ', $_GET['i'] ?? '';
`

// newTestPool starts a pool on the real php-cgi running poolScript;
// Close runs at cleanup.
func newTestPool(t *testing.T, cfg Config) (*Pool, string) {
	t.Helper()
	return startPool(t, cfg, nil), writeScript(t, "index.php", poolScript)
}

// writeScript writes a PHP script into a fresh public directory.
func writeScript(t testing.TB, name, src string) string {
	t.Helper()
	script := filepath.Join(testbed.PublicDir(t), name)
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return script
}

// get runs index.php with query and returns HTTP status, worker PID and
// the text after the PID.
func get(p *Pool, script, query string) (status, pid int, rest string, err error) {
	ps := []Param{
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SCRIPT_FILENAME", script},
		{"SCRIPT_NAME", "/index.php"},
		{"REQUEST_METHOD", "GET"},
		{"REQUEST_URI", "/index.php?" + query},
		{"QUERY_STRING", query},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"REDIRECT_STATUS", "200"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	if _, err := p.Do(ctx, ps, nil, &out, nil); err != nil {
		return 0, 0, "", err
	}
	r := bufioReader(out.Bytes())
	status, _, err = ReadResponseHead(r)
	if err != nil {
		return 0, 0, "", err
	}
	body, _ := r.ReadString(0) // reads to EOF; io.EOF is expected
	pidText, rest, _ := strings.Cut(body, " ")
	pid, err = strconv.Atoi(pidText)
	if err != nil {
		return 0, 0, "", fmt.Errorf("body %q: %w", body, err)
	}
	return status, pid, rest, nil
}

// childPHP counts the php-cgi processes serving requests for this test
// binary: its php-cgi children (the separate engine's workers) that fork
// none, and the children of those that do (a master's).
func childPHP() int {
	n := 0
	for _, c := range testbed.Children(os.Getpid()) {
		if !strings.HasPrefix(c.Comm, "php-cgi") {
			continue
		}
		if forked := testbed.Children(c.PID); len(forked) > 0 {
			n += len(forked)
		} else {
			n++
		}
	}
	return n
}

func TestPoolServesRequests(t *testing.T) {
	p, script := newTestPool(t, Config{})
	tests := []struct {
		name, query, want string
		status            int
	}{
		{"ok", "i=1", "1", 200},
		{"status from php", "i=2&code=404", "2", 404},
		{"empty", "", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, rest, err := get(p, script, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || rest != tt.want {
				t.Fatalf("got %d %q, want %d %q", status, rest, tt.status, tt.want)
			}
		})
	}
	if st := p.Status(); len(st) != 1 || st[0].Requests != 3 || st[0].State != "idle" {
		t.Fatalf("status %+v, want one idle worker with 3 requests", st)
	}
}

func TestPoolConcurrentRequestsStayWithinMax(t *testing.T) {
	p, script := newTestPool(t, Config{Min: 1, Max: 2})
	stop := make(chan struct{})
	peak := make(chan int)
	go func() { // sampler, joined through peak
		most := 0
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			most = max(most, childPHP())
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, _, rest, err := get(p, script, fmt.Sprintf("i=%d&ms=50", i))
			if err == nil && rest != strconv.Itoa(i) {
				err = fmt.Errorf("request %d got body %q", i, rest)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(stop)
	most := <-peak
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if most > 2 || most == 0 {
		t.Fatalf("peak php-cgi processes %d, want 1..2", most)
	}
	if n := len(p.Status()); n > 2 {
		t.Fatalf("%d workers, want <= 2", n)
	}
}

func TestPoolRecyclesAfterMaxRequests(t *testing.T) {
	p, script := newTestPool(t, Config{Min: 1, Max: 1, MaxRequests: 3})
	uses := map[int]int{}
	var order []int
	for i := range 10 {
		_, pid, _, err := get(p, script, "i="+strconv.Itoa(i))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if uses[pid] == 0 {
			order = append(order, pid)
		}
		uses[pid]++
	}
	if len(order) != 4 {
		t.Fatalf("PIDs %v (uses %v), want 4 workers for 10 requests at 3 each", order, uses)
	}
	for pid, n := range uses {
		if n > 3 {
			t.Fatalf("worker %d served %d requests, max 3", pid, n)
		}
	}
}

func TestPoolRecyclesUnderLoadWithoutFailures(t *testing.T) {
	p, script := newTestPool(t, Config{Min: 1, Max: 2, MaxRequests: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				_, _, _, err := get(p, script, fmt.Sprintf("i=%d", g*10+i))
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestPoolSuspendsIdleWorkerAndResumesIt(t *testing.T) {
	p, script := newTestPool(t, Config{IdleSuspend: 200 * time.Millisecond})
	_, pid, _, err := get(p, script, "i=1")
	if err != nil {
		t.Fatal(err)
	}
	testbed.WaitFor(t, 5*time.Second, "worker stopped", func() bool { return testbed.ProcState(pid) == "T" })
	if st := p.Status(); len(st) != 1 || st[0].State != "suspended" {
		t.Fatalf("status %+v, want one suspended worker", st)
	}
	_, pid2, rest, err := get(p, script, "i=2")
	if err != nil || rest != "2" {
		t.Fatalf("request after suspend: %q, %v", rest, err)
	}
	if pid2 != pid {
		t.Fatalf("served by %d, want the resumed worker %d", pid2, pid)
	}
	if s := testbed.ProcState(pid); s == "T" || s == "" {
		t.Fatalf("worker state %q after the request, want running", s)
	}
}

func TestPoolReplacesKilledWorker(t *testing.T) {
	p, script := newTestPool(t, Config{})
	_, pid, _, err := get(p, script, "i=1")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testbed.WaitFor(t, 5*time.Second, "killed worker reaped", func() bool { return len(p.Status()) == 0 })
	_, pid2, rest, err := get(p, script, "i=2")
	if err != nil || rest != "2" {
		t.Fatalf("request after kill: %q, %v", rest, err)
	}
	if pid2 == pid {
		t.Fatalf("served by the killed worker %d", pid)
	}
}

func TestPoolReturnsErrBusyAfterQueueWait(t *testing.T) {
	p, script := newTestPool(t, Config{Max: 1, QueueWait: 200 * time.Millisecond})
	slow := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, script, "i=1&ms=1500")
		slow <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "worker busy", func() bool {
		st := p.Status()
		return len(st) == 1 && st[0].State == "busy"
	})
	start := time.Now()
	_, _, _, err := get(p, script, "i=2")
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("err %v, want ErrBusy", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 1200*time.Millisecond {
		t.Fatalf("ErrBusy after %v, want about 200ms", d)
	}
	if err := <-slow; err != nil {
		t.Fatalf("slow request: %v", err)
	}
}

func TestPoolCloseKillsEveryWorker(t *testing.T) {
	p, script := newTestPool(t, Config{Min: 2, Max: 3, IdleSuspend: 50 * time.Millisecond})
	busy := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, script, "i=1&ms=5000")
		busy <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "one busy and two suspended workers", func() bool {
		var b, s int
		for _, w := range p.Status() {
			switch w.State {
			case "busy":
				b++
			case "suspended":
				s++
			}
		}
		return b == 1 && s >= 1
	})
	// Wait until the busy script sleeps in its usleep: php-cgi's SIGTERM
	// handler only sets a flag, so a SIGTERM that arrives before the sleep
	// starts (the script still compiling, under load) does not cut it
	// short, and the worker would need the SIGKILL after killGrace.
	var pids []int
	busyPID := 0
	for _, w := range p.Status() {
		pids = append(pids, w.PID)
		if w.State == "busy" {
			busyPID = w.PID
		}
	}
	testbed.WaitFor(t, 5*time.Second, "the busy script in its usleep", func() bool {
		return strings.Contains(testbed.WChan(busyPID), "nanosleep")
	})
	masterPID := 0 // the shared engine's master: its group must be empty after Close
	if m, ok := p.eng.(*master); ok {
		masterPID = m.pid()
	}
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > killGrace {
		t.Fatalf("Close took %v", d)
	}
	if masterPID != 0 {
		if s := testbed.ProcState(masterPID); s != "" {
			t.Errorf("master %d still exists in state %q", masterPID, s)
		}
		if left := liveMembers(masterPID); len(left) != 0 {
			t.Errorf("processes %v left in the master's group", left)
		}
	}
	for _, pid := range pids {
		if s := testbed.ProcState(pid); s != "" && s != "Z" {
			t.Errorf("worker %d still exists in state %q", pid, s)
		}
	}
	if n := childPHP(); n != 0 {
		t.Errorf("%d php-cgi children left", n)
	}
	if err := <-busy; err == nil {
		t.Error("request in flight during Close succeeded")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, _, err := get(p, script, "i=2"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close: %v, want ErrClosed", err)
	}
}

func TestPoolReportsWorkersFailingAtStart(t *testing.T) {
	p, err := New(Config{Name: "broken", Binary: "/bin/false"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(context.Background()); err == nil {
		t.Fatal("Start with a binary that exits succeeded")
	}
	for i := range 3 {
		start := time.Now()
		_, _, _, err := get(p, "/nonexistent", "")
		if err == nil || errors.Is(err, ErrBusy) {
			t.Fatalf("Do %d: %v, want a start failure", i, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("Do %d took %v, want an immediate failure", i, d)
		}
	}
}

// endRecorder is a stdout that notes the workers' states when the pool
// ends its output.
type endRecorder struct {
	bytes.Buffer
	p      *Pool
	states []string
	ends   int
}

func (e *endRecorder) EndOutput() {
	e.ends++
	for _, w := range e.p.Status() {
		e.states = append(e.states, w.State)
	}
}

func TestPoolEndsOutputBeforeHandingTheWorkerOn(t *testing.T) {
	p := startPool(t, Config{Min: 1, Max: 1}, nil)
	hello, crash := testdataScript(t, "hello.php"), testdataScript(t, "crash.php")
	out := &endRecorder{p: p}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Do(ctx, scriptParams(hello, "GET", ""), nil, out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out.ends != 1 || !slices.Equal(out.states, []string{"busy"}) {
		t.Fatalf("EndOutput called %d times with workers %v, want once while the worker is still busy", out.ends, out.states)
	}
	failed := &endRecorder{p: p}
	if _, err := p.Do(ctx, scriptParams(crash, "POST", ""), nil, failed, io.Discard); err == nil {
		t.Fatal("crash.php succeeded")
	}
	if failed.ends != 0 {
		t.Fatal("EndOutput called for a failed request")
	}
}

// php-cgi closes a connection it accepted when no request arrives within
// 5 s; the pool connects when a worker starts, so a worker idle that long
// before its first request must still serve it (a POST too: PHP never
// read anything from the closed connection). The separate engine redials;
// the shared engine's first request at claim keeps the connection open.
func TestPoolWorkerIdleBeforeItsFirstRequestServesIt(t *testing.T) {
	t.Parallel()
	for _, engine := range []Engine{EngineShared, EngineSeparate} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			p, script := newTestPool(t, Config{Engine: engine, Min: 2, Max: 2})
			if engine == EngineSeparate {
				waitDropped(t, p)
			} else {
				waitKept(t, p)
			}
			for _, method := range []string{"GET", "POST"} {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				var out bytes.Buffer
				_, err := p.Do(ctx, scriptParams(script, method, "i=1"), nil, &out, io.Discard)
				cancel()
				if err != nil {
					t.Fatalf("%s on a worker idle since it started: %v", method, err)
				}
			}
			if st := p.Stats(); st.Crashes != 0 || st.Retries != 0 || st.Spawns != 2 {
				t.Fatalf("stats %+v: a worker idle before its first request counted as crashed", st)
			}
		})
	}
}

// waitDropped waits until every worker of p has dropped the pool's
// connection for want of a first request: php-cgi then holds only its
// listening socket. This waits out php-cgi's own 5 s in real time (its
// timer, not ours), but no longer.
func waitDropped(t *testing.T, p *Pool) {
	t.Helper()
	dropped := func() bool {
		for _, w := range p.Status() {
			if n, err := testbed.SocketCount(w.PID); err != nil || n != 1 {
				return false
			}
		}
		return true
	}
	if !testbed.Poll(15*time.Second, dropped) {
		t.Fatal("php-cgi workers still hold the connection of their first request after 15 s")
	}
}

// waitKept waits until every worker of p is older than php-cgi's 5 s
// (its timer, in real time) and checks that each still holds the pool's
// connection besides the master's listening socket.
func waitKept(t *testing.T, p *Pool) {
	t.Helper()
	old := func() bool {
		for _, w := range p.Status() {
			if w.Age < 5500*time.Millisecond {
				return false
			}
		}
		return true
	}
	if !testbed.Poll(15*time.Second, old) {
		t.Fatal("workers not 5.5 s old after 15 s")
	}
	for _, w := range p.Status() {
		if n, err := testbed.SocketCount(w.PID); err != nil || n != 2 {
			t.Fatalf("worker %d holds %d sockets (%v), want the listening one and the pool's connection", w.PID, n, err)
		}
	}
}

// TestPoolResponseClosedEarlyIsDrainedAndTheWorkerKept: a caller that
// stops reading (its client went away) closes the Response; the rest of
// the output is drained and the one worker serves the next request.
func TestPoolResponseClosedEarlyIsDrainedAndTheWorkerKept(t *testing.T) {
	p := startPool(t, Config{Max: 1}, nil)
	big := writeScript(t, "big.php", `<?php for ($i = 0; $i < 64; $i++) { echo str_repeat('x', 65536); flush(); }`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := p.Begin(ctx, scriptParams(big, "GET", ""), nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Status()[0].PID
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, pid2, rest, err := get(p, writeScript(t, "index.php", poolScript), "i=after")
	if err != nil || rest != "after" || pid2 != pid {
		t.Fatalf("request after an abandoned response: pid %d (first %d), %q, %v", pid2, pid, rest, err)
	}
	if st := p.Stats(); st.Crashes != 0 || st.Spawns != 1 {
		t.Fatalf("stats %+v: the worker should have been kept", st)
	}
}
