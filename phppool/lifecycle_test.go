package phppool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// spawnThree makes p run three workers by sending three slow requests at once.
func spawnThree(t *testing.T, p *Pool, script string) []int {
	t.Helper()
	var wg sync.WaitGroup
	pids := make([]int, 3)
	for i := range pids {
		wg.Go(func() {
			_, pid, _, err := get(p, script, "ms=300")
			if err != nil {
				t.Error(err)
			}
			pids[i] = pid
		})
	}
	wg.Wait()
	if pids[0] == pids[1] || pids[1] == pids[2] || pids[0] == pids[2] {
		t.Fatalf("workers %v, want three", pids)
	}
	return pids
}

func TestPoolIdleExitKeepsMinWorkers(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"idle workers exit", Config{Min: 1, Max: 3, IdleExit: 300 * time.Millisecond}},
		{"suspended workers exit", Config{Min: 1, Max: 3, IdleSuspend: 50 * time.Millisecond, IdleExit: 400 * time.Millisecond}},
		{"min two stay", Config{Min: 2, Max: 3, IdleExit: 300 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, script := newTestPool(t, tt.cfg)
			pids := spawnThree(t, p, script)
			testbed.WaitFor(t, 5*time.Second, "idle workers exited", func() bool {
				gone := 0
				for _, pid := range pids {
					if testbed.ProcState(pid) == "" {
						gone++
					}
				}
				return gone == 3-tt.cfg.Min
			})
			if n := len(p.Status()); n != tt.cfg.Min {
				t.Fatalf("%d workers left, want %d", n, tt.cfg.Min)
			}
			if _, _, rest, err := get(p, script, "i=7"); err != nil || rest != "7" {
				t.Fatalf("request after idle exit: %q, %v", rest, err)
			}
			if st := p.Stats(); st.Crashes != 0 {
				t.Fatalf("%d crashes, want 0", st.Crashes)
			}
		})
	}
}

func TestPoolShutdownFinishesRequestsInFlight(t *testing.T) {
	p, script := newTestPool(t, Config{Min: 1, Max: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 3 {
		wg.Go(func() {
			_, _, rest, err := get(p, script, fmt.Sprintf("i=%d&ms=400", i))
			if err == nil && rest != fmt.Sprint(i) {
				err = fmt.Errorf("request %d got %q", i, rest)
			}
			errs <- err
		})
	}
	testbed.WaitFor(t, 5*time.Second, "three busy workers", func() bool { return p.Stats().Requests == 3 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- p.Shutdown(ctx) }()
	// A request that picked this pool just before a reload swapped it out.
	late := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, script, "i=late")
		late <- err
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("request in flight: %v", err)
		}
	}
	if err := <-late; err != nil {
		t.Errorf("request during linger: %v", err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := childPHP(); n != 0 {
		t.Fatalf("%d php-cgi children after Shutdown", n)
	}
	if _, _, _, err := get(p, script, "i=9"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Shutdown: %v, want ErrClosed", err)
	}
}

func TestPoolShutdownStopsAtContextEnd(t *testing.T) {
	p, script := newTestPool(t, Config{})
	slow := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, script, "ms=5000")
		slow <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "worker busy", func() bool { return p.Stats().Requests == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), drainLinger+100*time.Millisecond)
	defer cancel()
	if err := p.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want DeadlineExceeded", err)
	}
	if err := <-slow; err == nil {
		t.Fatal("request still running when Shutdown gave up succeeded")
	}
}

// TestPoolReloadUnderLoadHasNoFailures swaps pools as a reload does while
// clients keep sending, then shuts the old one down.
func TestPoolReloadUnderLoadHasNoFailures(t *testing.T) {
	old, script := newTestPool(t, Config{Min: 2, Max: 2})
	fresh, _ := newTestPool(t, Config{Min: 2, Max: 2})
	var cur atomic.Pointer[Pool]
	cur.Store(old)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent, failed atomic.Int64
	for g := range 6 {
		wg.Go(func() {
			for i := range 200 { // bounded even if stop never came
				select {
				case <-stop:
					return
				default:
				}
				sent.Add(1)
				if _, _, rest, err := get(cur.Load(), script, fmt.Sprintf("i=%d-%d", g, i)); err != nil || rest != fmt.Sprintf("%d-%d", g, i) {
					failed.Add(1)
					t.Errorf("request %d-%d: %q, %v", g, i, rest, err)
				}
			}
		})
	}
	testbed.WaitFor(t, 5*time.Second, "load on the old pool", func() bool { return old.Stats().Requests >= 20 })
	cur.Store(fresh)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := old.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	testbed.WaitFor(t, 5*time.Second, "load on the new pool", func() bool { return fresh.Stats().Requests >= 20 })
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed across the reload", failed.Load(), sent.Load())
	}
}

func TestSuperviseEveryIsAQuarterOfTheShortestLimit(t *testing.T) {
	tests := []struct {
		name          string
		suspend, exit time.Duration
		want          time.Duration
	}{
		{"neither set", 0, 0, 0},
		{"suspend only", 400 * time.Millisecond, 0, 100 * time.Millisecond},
		{"exit shorter", 10 * time.Second, 2 * time.Second, 500 * time.Millisecond},
		{"floor", time.Millisecond, 0, 10 * time.Millisecond},
		{"ceiling", time.Minute, time.Hour, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := superviseEvery(tt.suspend, tt.exit); got != tt.want {
				t.Fatalf("superviseEvery(%v, %v) = %v, want %v", tt.suspend, tt.exit, got, tt.want)
			}
		})
	}
}
