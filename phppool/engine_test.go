package phppool

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestSeparateEngineKeepsIssue5Behaviour runs the pool's tests again on
// the separate engine (one process per worker), which stays selectable.
func TestSeparateEngineKeepsIssue5Behaviour(t *testing.T) {
	tests := []struct {
		name string
		run  func(*testing.T)
	}{
		{"ServesRequests", TestPoolServesRequests},
		{"ConcurrentRequestsStayWithinMax", TestPoolConcurrentRequestsStayWithinMax},
		{"RecyclesAfterMaxRequests", TestPoolRecyclesAfterMaxRequests},
		{"RecyclesUnderLoadWithoutFailures", TestPoolRecyclesUnderLoadWithoutFailures},
		{"SuspendsIdleWorkerAndResumesIt", TestPoolSuspendsIdleWorkerAndResumesIt},
		{"ReplacesKilledWorker", TestPoolReplacesKilledWorker},
		{"ReturnsErrBusyAfterQueueWait", TestPoolReturnsErrBusyAfterQueueWait},
		{"CloseKillsEveryWorker", TestPoolCloseKillsEveryWorker},
		{"EndsOutputBeforeHandingTheWorkerOn", TestPoolEndsOutputBeforeHandingTheWorkerOn},
		{"KillsWorkerStuckPastRequestTimeout", TestPoolKillsWorkerStuckPastRequestTimeout},
		{"RetiresWorkerWhenCallerCancels", TestPoolRetiresWorkerWhenCallerCancels},
		{"RetriesOnlyWhatIsSafeAfterAWorkerDiedIdle", TestPoolRetriesOnlyWhatIsSafeAfterAWorkerDiedIdle},
		{"ServesGetAfterIdleWorkerWasKilled", TestPoolServesGetAfterIdleWorkerWasKilled},
		{"ReportsWorkerCrashMidRequest", TestPoolReportsWorkerCrashMidRequest},
		{"ServesQueuedRequestsInArrivalOrder", TestPoolServesQueuedRequestsInArrivalOrder},
		{"CallerDeadlineWhileQueuedIsATimeout", TestPoolCallerDeadlineWhileQueuedIsATimeout},
		{"IdleExitKeepsMinWorkers", TestPoolIdleExitKeepsMinWorkers},
		{"ShutdownFinishesRequestsInFlight", TestPoolShutdownFinishesRequestsInFlight},
		{"ShutdownStopsAtContextEnd", TestPoolShutdownStopsAtContextEnd},
		{"ReloadUnderLoadHasNoFailures", TestPoolReloadUnderLoadHasNoFailures},
		{"LogsSlowRequestsAndPHPStderr", TestPoolLogsSlowRequestsAndPHPStderr},
		{"RecyclesWorkerOverMaxRSS", TestPoolRecyclesWorkerOverMaxRSS},
		{"StatsCountResumes", TestPoolStatsCountResumes},
		{"RunsPHPAsTheConfiguredUserWhenRoot", TestPoolRunsPHPAsTheConfiguredUserWhenRoot},
	}
	testEngine = EngineSeparate
	defer func() { testEngine = "" }()
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// opcacheINI lets a script written a moment ago into the opcache
// (file_update_protection skips files changed in the last 2 s).
var opcacheINI = []string{"opcache.enable=1", "opcache.file_update_protection=0"}

// TestSharedPoolWorkersShareOneOpcache compiles a script on one worker
// and asks another whether it is cached: in the shared engine it is, in
// the separate one (each worker its own opcache) it is not.
func TestSharedPoolWorkersShareOneOpcache(t *testing.T) {
	for _, tt := range []struct {
		engine Engine
		shared bool
	}{{EngineShared, true}, {EngineSeparate, false}} {
		t.Run(string(tt.engine), func(t *testing.T) {
			p, hold := newTestPool(t, Config{Engine: tt.engine, Min: 2, Max: 2, INI: opcacheINI})
			target := writeScript(t, "target.php", "<?php echo getmypid();")
			probe := writeScript(t, "probe.php", `<?php
$f = $_GET['f'];
$s = opcache_get_status(true);
echo getmypid(), ' ', opcache_is_script_cached($f) ? 'cached' : 'not-cached', ' ', $s['scripts'][$f]['hits'] ?? -1;`)
			body, err := runFor(p, target, "GET", "")
			if err != nil {
				t.Fatal(err)
			}
			first, _ := strconv.Atoi(body)
			// The worker that compiled target.php is on top of the idle
			// stack: the hold takes it, the probe gets the other one.
			held := make(chan error, 1)
			go func() {
				_, _, _, err := get(p, hold, "ms=1000")
				held <- err
			}()
			testbed.WaitFor(t, 5*time.Second, "the first worker busy", func() bool {
				for _, w := range p.Status() {
					if w.PID == first && w.State == "busy" {
						return true
					}
				}
				return false
			})
			body, err = runFor(p, probe, "GET", "f="+target)
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(body)
			if len(f) != 3 || f[0] == strconv.Itoa(first) {
				t.Fatalf("probe %q: want another worker than %d", body, first)
			}
			want := "not-cached"
			if tt.shared {
				want = "cached"
			}
			if f[1] != want {
				t.Fatalf("worker %s sees target.php, compiled by worker %d, as %s; want %s", f[0], first, f[1], want)
			}
			if err := <-held; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSharedPoolUsesLessMemoryThanSeparateWorkers runs an include-heavy
// script on four workers of each engine and compares the pools' PSS.
func TestSharedPoolUsesLessMemoryThanSeparateWorkers(t *testing.T) {
	pss := map[Engine]int64{}
	for _, engine := range []Engine{EngineShared, EngineSeparate} {
		t.Run(string(engine), func(t *testing.T) {
			p := startPool(t, Config{Engine: engine, Min: 4, Max: 4, INI: opcacheINI}, nil)
			app := includeHeavyApp(t, testbed.PublicDir(t))
			var wg sync.WaitGroup
			for range 4 { // at once, so every worker runs it
				wg.Go(func() {
					if _, err := runFor(p, app, "GET", "ms=300"); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			pids := poolProcesses(p)
			n, err := testbed.PSS(pids...)
			if err != nil {
				t.Fatal(err)
			}
			pss[engine] = n
			t.Logf("%s engine: %d processes, PSS %.1f MiB", engine, len(pids), float64(n)/(1<<20))
		})
	}
	if pss[EngineShared] == 0 || pss[EngineShared] >= pss[EngineSeparate] {
		t.Fatalf("PSS shared %d, separate %d: want the shared pool smaller", pss[EngineShared], pss[EngineSeparate])
	}
}

// poolProcesses lists p's php-cgi processes: the workers, and the master
// with its unclaimed children in the shared engine.
func poolProcesses(p *Pool) []int {
	if m, ok := p.eng.(*master); ok {
		if pid := m.pid(); pid != 0 {
			return append([]int{pid}, childrenOf(pid)...)
		}
	}
	var pids []int
	for _, w := range p.Status() {
		pids = append(pids, w.PID)
	}
	return pids
}

// TestSuspendedWorkersHoldNoOpcacheLock checks /proc/locks: a worker in a
// request holds opcache's read lock on the shared memory (an opcache
// restart waits for it), a suspended worker holds none — it was stopped
// only after its request ended.
func TestSuspendedWorkersHoldNoOpcacheLock(t *testing.T) {
	p, script := newTestPool(t, Config{Max: 1, IdleSuspend: 300 * time.Millisecond, INI: opcacheINI})
	pid := p.Status()[0].PID
	held := make(chan error, 1)
	go func() {
		_, _, _, err := get(p, script, "ms=1000")
		held <- err
	}()
	testbed.WaitFor(t, 5*time.Second, "the busy worker holding the opcache lock", func() bool { return locksHeld(t, pid) > 0 })
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	testbed.WaitFor(t, 5*time.Second, "worker suspended", func() bool { return testbed.ProcState(pid) == "T" })
	if n := locksHeld(t, pid); n != 0 {
		t.Fatalf("suspended worker %d holds %d locks", pid, n)
	}
}

// locksHeld counts the file locks process pid holds (/proc/locks).
func locksHeld(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		// "1: POSIX  ADVISORY  READ 1234 00:1c:56 1 1"; blocked waiters start with "->"
		if f := strings.Fields(line); len(f) > 4 && f[1] != "->" && f[4] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

// TestSharedPoolSurvivesItsMasterDying kills the master outright: its
// children are ended with it (none is left running unowned) and the next
// request starts a new master.
func TestSharedPoolSurvivesItsMasterDying(t *testing.T) {
	p, script := newTestPool(t, Config{Min: 2, Max: 2})
	m := p.eng.(*master)
	old := m.pid()
	children := childrenOf(old)
	if len(children) != 2 {
		t.Fatalf("master %d has children %v, want 2", old, children)
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testbed.WaitFor(t, 5*time.Second, "the old master's children gone", func() bool { return len(liveMembers(old)) == 0 })
	if _, pid, rest, err := get(p, script, "i=after"); err != nil || rest != "after" || pid == children[0] || pid == children[1] {
		t.Fatalf("request after the master died: pid %d, %q, %v", pid, rest, err)
	}
	if now := m.pid(); now == old || now == 0 {
		t.Fatalf("master %d, want a new one (old %d)", now, old)
	}
}

// liveMembers lists the processes of group pgid but pgid that have not
// exited: an exited child of a master that exited first is reparented and
// stays a zombie until init reaps it.
func liveMembers(pgid int) []int {
	var out []int
	for _, pid := range groupMembers(pgid) {
		if s := testbed.ProcState(pid); s != "" && s != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// TestSharedPoolKnowsWhichChildServesEachRequest runs three slow requests
// at once: the pids the pool reports busy are the pids the scripts see.
func TestSharedPoolKnowsWhichChildServesEachRequest(t *testing.T) {
	p, script := newTestPool(t, Config{Min: 1, Max: 3})
	var mu sync.Mutex
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			_, pid, _, err := get(p, script, fmt.Sprintf("i=%d&ms=500", i))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			seen[pid] = true
			mu.Unlock()
		})
	}
	busy := map[int]bool{}
	testbed.WaitFor(t, 5*time.Second, "three busy workers", func() bool {
		n := 0
		for _, w := range p.Status() {
			if w.State == "busy" {
				busy[w.PID] = true
				n++
			}
		}
		return n == 3
	})
	wg.Wait()
	if len(seen) != 3 || len(busy) != 3 {
		t.Fatalf("scripts ran in %v, pool had busy %v: want 3 each", seen, busy)
	}
	for pid := range seen {
		if !busy[pid] {
			t.Fatalf("a script ran in %d, which the pool did not report busy (%v)", pid, busy)
		}
	}
}

// TestSharedPoolStatusAccountsForEveryProcess: the workers and the
// master's unclaimed children together are the master's children, and
// each reports its PSS.
func TestSharedPoolStatusAccountsForEveryProcess(t *testing.T) {
	p, _ := newTestPool(t, Config{Min: 1, Max: 3})
	mp := p.eng.(*master).pid()
	testbed.WaitFor(t, 5*time.Second, "the master's three children", func() bool { return len(childrenOf(mp)) == 3 }) // it forks them one by one
	ws, m := p.Status(), p.Master()
	if len(ws) != 1 || m.PID == 0 || len(m.Spares) != 2 {
		t.Fatalf("workers %+v, master %+v: want 1 worker and 2 spares", ws, m)
	}
	all := map[int]bool{ws[0].PID: true}
	for _, s := range m.Spares {
		all[s] = true
	}
	for _, c := range childrenOf(m.PID) {
		if !all[c] {
			t.Fatalf("child %d of the master is neither worker nor spare (%+v, %+v)", c, ws, m)
		}
		delete(all, c)
	}
	if len(all) != 0 {
		t.Fatalf("%v reported but not children of the master", all)
	}
	if ws[0].PSS <= 0 || m.PSS <= 0 || ws[0].PSS > ws[0].RSS {
		t.Fatalf("worker %+v, master %+v: want PSS above 0 and at most the RSS", ws[0], m)
	}
}
