package phppool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// separate is the engine of issue 5: one php-cgi process per worker,
// each listening on a socket of its own with its own opcache. Its workers
// start and end with the pool's demand (min_workers, idle_exit), as
// separate processes; nothing is shared, so a pool of N workers holds N
// copies of the compiled scripts.
type separate struct{ p *Pool }

// spawn starts a worker and connects to it, retrying with a fresh socket
// when php-cgi exits before accepting. The caller holds a procs slot.
func (e separate) spawn(ctx context.Context) (*worker, error) {
	var err error
	for range bindAttempts {
		var w *worker
		w, err = e.spawnOnce(ctx)
		if err == nil || !errors.Is(err, errExitedEarly) {
			return w, err
		}
	}
	return nil, err
}

// stop has nothing to end: every process is a worker, ended as one.
func (separate) stop() {}

// spawnOnce starts one php-cgi on a fresh socket and waits until it
// accepts. On failure the process has been reaped before it returns.
func (e separate) spawnOnce(ctx context.Context) (*worker, error) {
	p := e.p
	addr := p.socks.next()
	cmd := p.command("-b", addr)
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)],
		// Later entries win: php-cgi must serve one connection at a time in
		// one process and must not exit before the pool recycles it.
		"PHP_FCGI_CHILDREN=0", "PHP_FCGI_MAX_REQUESTS="+strconv.Itoa(p.cfg.MaxRequests+100))
	stderr := &lineLogger{log: p.log}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second // bounds the stderr copy after exit
	// Its own process group keeps a terminal's or an orphaned job's
	// SIGHUP from killing (suspended) workers; Pdeathsig ends them with
	// ramjet even if ramjet is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startWithoutCaps(cmd); err != nil {
		return nil, fmt.Errorf("phppool: start %s: %w", p.bin, err)
	}
	w := &worker{pid: cmd.Process.Pid, cmd: cmd, sock: addr, started: time.Now(), exited: make(chan struct{})}
	// Without /proc there is no RSS: MaxRSS and WorkerStatus.RSS stay off.
	w.statm, _ = os.Open("/proc/" + strconv.Itoa(w.pid) + "/statm")
	stderr.pid.Store(int64(w.pid))
	w.errLog = &lineLogger{log: p.log.With("stream", "fastcgi")}
	w.errLog.pid.Store(int64(w.pid))
	p.wg.Go(func() { e.reap(w) })
	nc, err := waitAccept(ctx, addr, w.exited, p.done)
	if err != nil {
		w.terminate(killGrace)
		return nil, fmt.Errorf("phppool: worker %d on %s: %w", w.pid, addr, err)
	}
	w.conn.Store(NewConn(nc))
	return w, nil
}

// reap waits for the process and tells the pool; one per process.
func (e separate) reap(w *worker) {
	err := w.cmd.Wait()
	if w.statm != nil {
		// Read-only; a close error loses nothing.
		_ = w.statm.Close()
	}
	// The socket file is the dead worker's; a worker that never bound
	// left none to remove.
	_ = os.Remove(w.sock)
	close(w.exited)
	e.p.reaped(w, err)
}
