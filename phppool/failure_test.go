package phppool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

func TestPoolKillsWorkerStuckPastRequestTimeout(t *testing.T) {
	p := startPool(t, Config{Max: 1, RequestTimeout: 300 * time.Millisecond}, nil)
	loop := testdataScript(t, "loop.php")
	hello := testdataScript(t, "hello.php")
	pid := p.Status()[0].PID
	_, err := runFor(p, loop, "GET", "")
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want ErrTimeout and DeadlineExceeded", err)
	}
	// SIGKILL at once: the looping worker is gone well before a SIGTERM
	// grace period would have ended.
	start := time.Now()
	testbed.WaitFor(t, 5*time.Second, "stuck worker killed", func() bool { return testbed.ProcState(pid) == "" })
	if d := time.Since(start); d >= killGrace {
		t.Fatalf("worker gone %v after the timeout, want SIGKILL at once", d)
	}
	if body, err := runFor(p, hello, "GET", ""); err != nil || body != "hello world" {
		t.Fatalf("request after the timeout: %q, %v", body, err)
	}
	if st := p.Stats(); st.Timeouts != 1 || st.Crashes != 0 || st.Spawns != 2 {
		t.Fatalf("stats %+v, want 1 timeout, 0 crashes, 2 spawns", st)
	}
}

func TestPoolRetiresWorkerWhenCallerCancels(t *testing.T) {
	p, script := newTestPool(t, Config{Max: 1})
	pid := p.Status()[0].PID
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, p, script, "GET", "ms=5000")
		done <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "worker busy", func() bool { st := p.Status(); return len(st) == 1 && st[0].State == "busy" })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, ErrWorkerFailed) {
		t.Fatalf("err %v, want Canceled and not ErrWorkerFailed", err)
	}
	testbed.WaitFor(t, 5*time.Second, "worker retired", func() bool { return testbed.ProcState(pid) == "" })
	if _, pid2, _, err := get(p, script, "i=2"); err != nil || pid2 == pid {
		t.Fatalf("request after cancel: pid %d (cancelled %d), %v", pid2, pid, err)
	}
}

func TestPoolRetriesOnlyWhatIsSafeAfterAWorkerDiedIdle(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		wantErr   error
		wantRetry uint64
	}{
		{"GET is retried on another worker", "GET", nil, 1},
		{"HEAD is retried on another worker", "HEAD", nil, 1},
		{"POST is not retried", "POST", ErrWorkerFailed, 0},
		{"PATCH is not retried", "PATCH", ErrWorkerFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, script := newTestPool(t, Config{Max: 2})
			dead := breakIdleWorker(t, p)
			_, err := runFor(p, script, tt.method, "i=1")
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if st := p.Stats(); st.Retries != tt.wantRetry {
				t.Fatalf("%d retries, want %d", st.Retries, tt.wantRetry)
			}
			testbed.WaitFor(t, 5*time.Second, "broken worker retired", func() bool { return testbed.ProcState(dead) == "" })
			if _, pid, _, err := get(p, script, "i=2"); err != nil || pid == dead {
				t.Fatalf("next request: pid %d (broken %d), %v", pid, dead, err)
			}
		})
	}
}

func TestPoolServesGetAfterIdleWorkerWasKilled(t *testing.T) {
	p, script := newTestPool(t, Config{})
	pid := p.Status()[0].PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// No waiting for the reaper: either it removed the worker already or
	// the request finds the connection dead and is retried.
	_, pid2, rest, err := get(p, script, "i=1")
	if err != nil || rest != "1" || pid2 == pid {
		t.Fatalf("request after kill: pid %d (killed %d), %q, %v", pid2, pid, rest, err)
	}
	testbed.WaitFor(t, 5*time.Second, "crash counted", func() bool { return p.Stats().Crashes == 1 })
}

func TestPoolReportsWorkerCrashMidRequest(t *testing.T) {
	tests := []struct {
		name        string
		query       string
		wantRetries uint64 // a GET that got no byte yet goes to a second worker, which crashes too
		wantCrashes uint64
	}{
		{"crash before any output is retried once", "", 1, 2},
		{"crash after output is not retried", "after=1", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startPool(t, Config{Max: 2}, nil)
			crash := testdataScript(t, "crash.php")
			hello := testdataScript(t, "hello.php")
			_, err := runFor(p, crash, "GET", tt.query)
			if !errors.Is(err, ErrWorkerFailed) {
				t.Fatalf("err %v, want ErrWorkerFailed", err)
			}
			testbed.WaitFor(t, 5*time.Second, "crashes counted", func() bool { return p.Stats().Crashes == tt.wantCrashes })
			if st := p.Stats(); st.Retries != tt.wantRetries {
				t.Fatalf("%d retries, want %d", st.Retries, tt.wantRetries)
			}
			if body, err := runFor(p, hello, "GET", ""); err != nil || body != "hello world" {
				t.Fatalf("request after the crash: %q, %v", body, err)
			}
		})
	}
}

func TestMayRetryFollowsNextUpstreamRules(t *testing.T) {
	tests := []struct {
		name   string
		method string
		ex     exchange
		want   bool
	}{
		{"GET, nothing received", "GET", exchange{}, true},
		{"GET, response started", "GET", exchange{received: 8}, false},
		{"GET, body consumed", "GET", exchange{bodyRead: 1}, false},
		{"POST, request sent", "POST", exchange{}, false},
		{"POST, sending failed", "POST", exchange{sendFirst: true}, true},
		{"LOCK, request sent", "LOCK", exchange{}, false},
		{"PATCH, sending failed after body read", "PATCH", exchange{sendFirst: true, bodyRead: 3}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := []Param{{"REQUEST_METHOD", tt.method}}
			if got := mayRetry(ps, tt.ex); got != tt.want {
				t.Fatalf("mayRetry = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConnReportsWhetherTheWorkerSentAnything(t *testing.T) {
	c := deadConn(t)
	defer c.Close()
	_, err := c.Do(context.Background(), cgiParams("GET", "/", -1), nil, nil, nil)
	if err == nil {
		t.Fatal("request on a closed peer succeeded")
	}
	if ex := c.lastExchange(); ex.received != 0 || ex.sendFirst {
		t.Fatalf("exchange %+v, want nothing received and the read failing first", ex)
	}
	ln := startFake(t, fakeHandler())
	c2 := dialFake(t, ln)
	if _, err := c2.Do(context.Background(), cgiParams("GET", "/hello", -1), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if ex := c2.lastExchange(); ex.received == 0 || ex.firstRecv.IsZero() {
		t.Fatalf("exchange %+v, want bytes received", ex)
	}
}

func TestPoolServesQueuedRequestsInArrivalOrder(t *testing.T) {
	p, script := newTestPool(t, Config{Max: 1})
	clock := testdataScript(t, "clock.php")
	busy := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, script, "ms=300")
		busy <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "worker busy", func() bool { return p.Stats().Requests == 1 })
	started := make([]chan string, 3)
	for i := range started {
		started[i] = make(chan string, 1)
		go func() {
			body, err := runFor(p, clock, "GET", "")
			if err != nil {
				body = err.Error()
			}
			started[i] <- body
		}()
		testbed.WaitFor(t, 5*time.Second, "request queued", func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return len(p.queue) == i+1
		})
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	var last int64
	for i, ch := range started {
		at, err := strconv.ParseInt(<-ch, 10, 64)
		if err != nil {
			t.Fatalf("queued request %d: %v", i, err)
		}
		if at <= last {
			t.Fatalf("queued request %d started before request %d", i, i-1)
		}
		last = at
	}
}

func TestPoolCallerDeadlineWhileQueuedIsATimeout(t *testing.T) {
	p, script := newTestPool(t, Config{Max: 1})
	busy := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, script, "ms=500")
		busy <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "worker busy", func() bool { return p.Stats().Requests == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := run(ctx, p, script, "GET", ""); !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want ErrTimeout and DeadlineExceeded", err)
	}
	if err := <-busy; err != nil {
		t.Fatalf("the running request: %v", err)
	}
	if st := p.Stats(); st.Timeouts != 0 || st.Spawns != 1 {
		t.Fatalf("stats %+v: no worker should have been killed", st)
	}
}

// goneClient is a Client whose Gone the test sets.
type goneClient struct{ gone atomic.Bool }

func (c *goneClient) Gone() bool { return c.gone.Load() }

// TestPoolSkipsQueuedRequestWhoseClientLeft queues a request behind a
// busy worker, lets its client go, and checks that the script never ran
// (it would have left a file) while the next request did.
func TestPoolSkipsQueuedRequestWhoseClientLeft(t *testing.T) {
	p, hold := newTestPool(t, Config{Max: 1})
	marks := t.TempDir()
	if err := os.Chmod(marks, 0o777); err != nil { // PHP runs as nobody under root
		t.Fatal(err)
	}
	mark := writeScript(t, "mark.php", `<?php file_put_contents($_GET['f'], 'ran'); echo 'marked';`)
	busy := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, hold, "ms=500")
		busy <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "worker busy", func() bool { return p.Stats().Requests == 1 })
	left := &goneClient{}
	skipped := make(chan error, 1)
	go func() {
		ctx := WithClient(context.Background(), left)
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := run(ctx, p, mark, "GET", "f="+filepath.Join(marks, "left"))
		skipped <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "request queued", func() bool { return p.Queued() == 1 })
	left.gone.Store(true)
	if err := <-skipped; !errors.Is(err, ErrClientGone) {
		t.Fatalf("queued request whose client left: %v, want ErrClientGone", err)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	stay := WithClient(context.Background(), &goneClient{})
	if body, err := run(stay, p, mark, "GET", "f="+filepath.Join(marks, "stayed")); err != nil || body != "marked" {
		t.Fatalf("request whose client stayed: %q, %v", body, err)
	}
	if _, err := os.Stat(filepath.Join(marks, "left")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the script of a request whose client left ran (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(marks, "stayed")); err != nil {
		t.Fatalf("the script of a request whose client stayed did not run: %v", err)
	}
	if st := p.Stats(); st.ClientGone != 1 || st.Crashes != 0 {
		t.Fatalf("stats %+v, want 1 request skipped for its client", st)
	}
}
