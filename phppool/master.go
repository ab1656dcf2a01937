package phppool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// master is the shared engine: one php-cgi master per pool, started with
// PHP_FCGI_CHILDREN=Max. Its children fork after the opcache's shared
// memory exists, so one compiled copy of each script serves them all, as
// php-fpm's children share their master's; the master forks a new child
// whenever one exits. ramjet never talks to the master, only to its
// children, over one keep-alive connection each: spawn connects to the
// master's socket, sends a request that runs no script (php-cgi drops an
// accepted connection that carries no request for 5 s, but keeps one that
// served a request), then asks the kernel which child accepted (peer.go).
// That child is the worker, signalled through a pidfd — suspend, kill,
// recycle — as the separate engine's processes are by pid.
type master struct {
	p *Pool

	mu      sync.Mutex // guards the fields below
	cur     *masterProc
	known   map[int]bool // children claimed as workers and not yet exited
	stopped bool
}

// masterProc is one run of the master; a master that exits is started
// again by the next spawn.
type masterProc struct {
	cmd    *exec.Cmd
	pid    int // also its process group's id, its children's group
	sock   string
	exited chan struct{} // closed once its group was swept and it was reaped
}

// claimAttempts bounds how often spawn connects again when the child
// that accepted is a worker on its way out.
const claimAttempts = 3

// primeParams run no script (an empty SCRIPT_FILENAME makes php-cgi drop
// the connection): php-cgi answers "No input file specified."
// at once and keeps the connection for the next request.
var primeParams = []Param{
	{"GATEWAY_INTERFACE", "CGI/1.1"},
	{"REQUEST_METHOD", "GET"},
	{"SCRIPT_FILENAME", "/dev/null/ramjet-prime"}, // can never exist
	{"SERVER_PROTOCOL", "HTTP/1.1"},
	{"REDIRECT_STATUS", "200"},
}

// errRetiring: the child that accepted is a worker the pool is ending;
// it took the connection between its own closing and its SIGTERM.
var errRetiring = errors.New("the child that accepted is being retired")

func (m *master) spawn(ctx context.Context) (*worker, error) {
	var err error
	for range claimAttempts {
		var mp *masterProc
		if mp, err = m.running(); err != nil {
			return nil, err
		}
		var w *worker
		w, err = m.claim(ctx, mp)
		if err == nil || !(errors.Is(err, errExitedEarly) || errors.Is(err, errRetiring)) {
			return w, err
		}
	}
	return nil, err
}

// running returns the master, starting it if none runs.
func (m *master) running() (*masterProc, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil, ErrClosed
	}
	if m.cur != nil {
		select {
		case <-m.cur.exited:
		default:
			return m.cur, nil
		}
	}
	mp, err := m.start()
	if err != nil {
		return nil, err
	}
	m.cur = mp
	return mp, nil
}

// start runs a master on a fresh socket; m.mu held.
func (m *master) start() (*masterProc, error) {
	p := m.p
	sock := p.socks.next()
	cmd := p.command("-b", sock)
	// Later entries win. The children never exit on their own count:
	// the pool recycles them.
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)],
		"PHP_FCGI_CHILDREN="+strconv.Itoa(p.cfg.Max), "PHP_FCGI_MAX_REQUESTS=0")
	stderr := &lineLogger{log: p.log}
	cmd.Stderr = stderr // the children's too: they inherit it
	cmd.WaitDelay = time.Second
	// Its own process group (its children join it) keeps a terminal's
	// SIGHUP away. Pdeathsig is SIGTERM, not SIGKILL: php-cgi's master
	// answers SIGTERM by sending it to its group, so its children end with
	// it even when ramjet is killed outright; suspended ones get it when
	// the group, orphaned with stopped members, is sent SIGHUP and SIGCONT.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := startWithoutCaps(cmd); err != nil {
		return nil, fmt.Errorf("phppool: start %s: %w", p.bin, err)
	}
	mp := &masterProc{cmd: cmd, pid: cmd.Process.Pid, sock: sock, exited: make(chan struct{})}
	stderr.pid.Store(int64(mp.pid))
	p.wg.Go(func() { m.reap(mp) })
	p.log.Debug("php-cgi master started", "pid", mp.pid, "children", p.cfg.Max)
	return mp, nil
}

// claim connects to mp's socket and returns the child that accepted as a
// worker.
func (m *master) claim(ctx context.Context, mp *masterProc) (*worker, error) {
	p := m.p
	nc, err := waitAccept(ctx, mp.sock, mp.exited, p.done)
	if err != nil {
		return nil, fmt.Errorf("phppool: master %d on %s: %w", mp.pid, mp.sock, err)
	}
	c := NewConn(nc)
	fail := func(err error) (*worker, error) {
		_ = c.Close() // nobody uses it
		select {
		case <-mp.exited:
			return nil, fmt.Errorf("phppool: master %d: %w (%w)", mp.pid, errExitedEarly, err)
		default:
			return nil, fmt.Errorf("phppool: master %d: %w", mp.pid, err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, startTimeout)
	_, err = c.Do(pctx, primeParams, nil, nil, nil)
	cancel()
	if err != nil {
		return fail(fmt.Errorf("first request: %w", err))
	}
	pid, err := childHolding(mp.pid, nc)
	if err != nil {
		return fail(err)
	}
	pfd, err := openPidfd(pid)
	if err != nil {
		return fail(err)
	}
	if pid, err = childHolding(mp.pid, nc); err != nil || !m.claimed(pid) {
		_ = pfd.close()
		if err == nil {
			err = fmt.Errorf("child %d: %w", pid, errRetiring)
		}
		return fail(err) // the pid may have been reused before the pidfd
	}
	w := &worker{pid: pid, pidfd: pfd, sock: mp.sock, started: time.Now(), exited: make(chan struct{})}
	w.conn.Store(c)
	// Without /proc there is no RSS: MaxRSS and WorkerStatus.RSS stay off.
	w.statm, _ = os.Open("/proc/" + strconv.Itoa(pid) + "/statm")
	w.errLog = &lineLogger{log: p.log.With("stream", "fastcgi")}
	w.errLog.pid.Store(int64(pid))
	p.wg.Go(func() { m.watch(w) })
	return w, nil
}

// claimed records pid as a worker, unless it is one already: a worker on
// its way out that accepted again.
func (m *master) claimed(pid int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known[pid] {
		return false
	}
	if m.known == nil {
		m.known = map[int]bool{}
	}
	m.known[pid] = true
	return true
}

// watch waits for a claimed child to exit and tells the pool. Its exit
// status goes to the master, which reaps it; whether it crashed is what
// the pool knows: it did unless the pool ended it.
func (m *master) watch(w *worker) {
	err := w.pidfd.wait()
	for err != nil && !w.pidfd.exited() { // a spurious wake-up; not closed before exit
		err = w.pidfd.wait()
	}
	if w.statm != nil {
		// Read-only; a close error loses nothing.
		_ = w.statm.Close()
	}
	close(w.exited)
	m.mu.Lock()
	delete(m.known, w.pid)
	m.mu.Unlock()
	_ = w.pidfd.close() // signals fail from now on, as they would anyway
	m.p.reaped(w, nil)
}

// reap waits for mp to exit, ends what is left of its children, then
// reaps it. Until it is reaped its pid, the group's id, stays taken, so
// the sweep cannot reach another process group that reused the number.
func (m *master) reap(mp *masterProc) {
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, mp.pid, &info, unix.WEXITED|unix.WNOWAIT, nil); !errors.Is(err, unix.EINTR) {
			break
		}
	}
	sweep(mp.pid)
	err := mp.cmd.Wait()
	close(mp.exited)
	m.mu.Lock()
	if m.cur == mp {
		m.cur = nil
	}
	stopped := m.stopped
	m.mu.Unlock()
	if !stopped {
		m.p.log.Warn("php-cgi master exited; its workers were ended and the next request starts another",
			"pid", mp.pid, "err", err)
	}
}

// sweep kills every process left in the process group pgid but pgid
// itself (SIGKILL ends stopped processes too) and waits for them.
func sweep(pgid int) {
	var wg sync.WaitGroup
	for _, pid := range groupMembers(pgid) {
		pfd, err := openPidfd(pid)
		if err != nil {
			continue // gone
		}
		if pgrpOf(pid) != pgid { // the pid was reused before the pidfd
			_ = pfd.close()
			continue
		}
		_ = pfd.signal(syscall.SIGKILL) // fails only if it is gone
		wg.Go(func() {
			pfd.waitFor(killGrace)
			_ = pfd.close()
		})
	}
	wg.Wait()
}

// stop ends the master once the pool's workers are gone: SIGTERM, which
// it passes to its group (the children nobody claimed), SIGKILL after a
// grace period; reap sweeps whatever is left.
func (m *master) stop() {
	m.mu.Lock()
	m.stopped = true
	mp := m.cur
	m.mu.Unlock()
	if mp == nil {
		return
	}
	_ = mp.cmd.Process.Signal(syscall.SIGTERM) // fails only if it is gone
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case <-mp.exited:
		return
	case <-t.C:
	}
	_ = mp.cmd.Process.Signal(syscall.SIGKILL)
	<-mp.exited
}

// isWorker reports whether the child pid was claimed as a worker.
func (m *master) isWorker(pid int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.known[pid]
}

// pid is the running master's pid, 0 if none runs.
func (m *master) pid() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return 0
	}
	return m.cur.pid
}

var _ engine = (*master)(nil)
