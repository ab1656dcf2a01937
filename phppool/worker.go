package phppool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// startTimeout bounds how long a new worker may take to accept.
	startTimeout = 10 * time.Second
	// bindAttempts is how often spawn retries with a fresh socket when
	// php-cgi exits before accepting.
	bindAttempts = 3
	// killGrace is how long a worker has to exit after SIGTERM before SIGKILL.
	killGrace = 2 * time.Second
	// acceptPoll is the interval between connection attempts to a new worker.
	acceptPoll = 10 * time.Millisecond
)

// errExitedEarly: the process exited before it accepted a connection.
var errExitedEarly = errors.New("php-cgi exited before accepting")

// workerState is what a worker is doing; guarded by Pool.mu.
type workerState int

const (
	stateIdle workerState = iota
	stateBusy
	stateSuspended
)

func (s workerState) String() string {
	switch s {
	case stateIdle:
		return "idle"
	case stateBusy:
		return "busy"
	case stateSuspended:
		return "suspended"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// worker is one php-cgi process listening on its own socket, with one
// keep-alive Conn. pid, cmd, statm, started and exited are set before the
// worker is shared and never change; conn changes only when the request
// holding the worker redials (redialFresh), while Close may read it.
type worker struct {
	pid     int
	cmd     *exec.Cmd
	sock    string // the Unix socket it listens on
	conn    atomic.Pointer[Conn]
	statm   *os.File    // /proc/PID/statm, open for the process's life; nil without /proc
	errLog  *lineLogger // logs the FastCGI stderr stream when Do's caller passes none
	started time.Time
	exited  chan struct{} // closed by the reaper goroutine after cmd.Wait

	// Guarded by Pool.mu.
	state      workerState
	requests   int
	lastUsed   time.Time
	registered bool // in Pool.workers at some point; its reaper frees a Pool.procs slot
	retired    bool // the pool is ending it; an exit is not a crash
	crashed    bool // counted in Stats.Crashes

	// Set by tryAcquire when it resumed the worker, read and cleared by
	// the Do that took it.
	resumedAt time.Time
}

// alive reports whether the process has not been reaped yet.
func (w *worker) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the process; it fails once the process was reaped.
func (w *worker) signal(sig syscall.Signal) error {
	if err := w.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("phppool: signal %v to worker %d: %w", sig, w.pid, err)
	}
	return nil
}

// terminate closes the Conn, resumes the process if it is stopped, sends
// SIGTERM, SIGKILL after grace, and returns once the process was reaped.
func (w *worker) terminate(grace time.Duration) {
	if c := w.conn.Load(); c != nil {
		// The worker is being discarded; a close error changes nothing.
		_ = c.Close()
	}
	// Errors mean the process is already gone; the reaper has its status.
	_ = w.signal(syscall.SIGCONT)
	_ = w.signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-w.exited:
		return
	case <-t.C:
	}
	_ = w.signal(syscall.SIGKILL) // as above: failure means it is gone
	<-w.exited
}

// kill closes the Conn, sends SIGKILL and returns once the process was
// reaped: for a worker stuck in a request, which SIGTERM does not end.
func (w *worker) kill() {
	// The worker is being discarded; a close error changes nothing.
	_ = w.conn.Load().Close()
	_ = w.signal(syscall.SIGKILL) // failure means it is gone
	<-w.exited
}

// pageSize converts statm's page counts to bytes.
var pageSize = int64(os.Getpagesize())

// rss returns the worker's resident memory in bytes (statm's second
// field), or 0 if it cannot be read. statm is reread in place, which
// costs one pread instead of an open per request.
func (w *worker) rss() int64 {
	if w.statm == nil {
		return 0
	}
	var buf [128]byte
	n, err := w.statm.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return 0 // closed by the reaper, or the process is gone
	}
	f := bytes.Fields(buf[:n])
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * pageSize
}

// spawn starts a worker and connects to it, retrying with a fresh port
// when php-cgi exits before accepting. The caller holds a procs slot.
func (p *Pool) spawn(ctx context.Context) (*worker, error) {
	var err error
	for range bindAttempts {
		var w *worker
		w, err = p.spawnOnce(ctx)
		if err == nil || !errors.Is(err, errExitedEarly) {
			return w, err
		}
	}
	return nil, err
}

// spawnOnce starts one php-cgi on an ephemeral port and waits until it
// accepts. On failure the process has been reaped before it returns.
func (p *Pool) spawnOnce(ctx context.Context) (*worker, error) {
	addr := p.socks.next()
	cmd := exec.Command(p.bin, append(p.args[:len(p.args):len(p.args)], "-b", addr)...)
	cmd.Env = p.env
	stderr := &lineLogger{log: p.log}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second // bounds the stderr copy after exit
	// Its own process group keeps a terminal's or an orphaned job's
	// SIGHUP from killing (suspended) workers; Pdeathsig ends them with
	// ramjet even if ramjet is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("phppool: start %s: %w", p.bin, err)
	}
	w := &worker{pid: cmd.Process.Pid, cmd: cmd, sock: addr, started: time.Now(), exited: make(chan struct{})}
	// Without /proc there is no RSS: MaxRSS and WorkerStatus.RSS stay off.
	w.statm, _ = os.Open("/proc/" + strconv.Itoa(w.pid) + "/statm")
	stderr.pid.Store(int64(w.pid))
	w.errLog = &lineLogger{log: p.log.With("stream", "fastcgi")}
	w.errLog.pid.Store(int64(w.pid))
	p.wg.Go(func() { p.reap(w) })
	nc, err := waitAccept(ctx, addr, w.exited, p.done)
	if err != nil {
		w.terminate(killGrace)
		return nil, fmt.Errorf("phppool: worker %d on %s: %w", w.pid, addr, err)
	}
	w.conn.Store(NewConn(nc))
	return w, nil
}

// reap waits for the process and tells the pool; one per process.
func (p *Pool) reap(w *worker) {
	err := w.cmd.Wait()
	if w.statm != nil {
		// Read-only; a close error loses nothing.
		_ = w.statm.Close()
	}
	// The socket file is the dead worker's; a worker that never bound
	// left none to remove.
	_ = os.Remove(w.sock)
	close(w.exited)
	p.reaped(w, err)
}

// waitAccept dials addr until it connects, the process exits, the pool
// closes, ctx is done or startTimeout passes.
func waitAccept(ctx context.Context, addr string, exited, closed <-chan struct{}) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(acceptPoll)
	defer tick.Stop()
	var d net.Dialer
	for {
		nc, err := d.DialContext(ctx, "unix", addr)
		if err == nil {
			return nc, nil
		}
		select {
		case <-exited:
			return nil, errExitedEarly
		case <-closed:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("not accepting: %w (last dial: %w)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// lineLogger logs a worker's stderr line by line: the process's own (Write
// is called only by the exec package's copy goroutine, which cmd.Wait
// joins) or the FastCGI stream of the request the worker is serving.
type lineLogger struct {
	log *slog.Logger
	pid atomic.Int64 // set right after Start; the first line may race it
	buf []byte       // partial line
}

// maxLine is the longest stderr line logged whole; longer ones are split.
const maxLine = 4096

func (l *lineLogger) Write(b []byte) (int, error) {
	l.buf = append(l.buf, b...)
	rest := l.buf
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		l.emit(rest[:i])
		rest = rest[i+1:]
	}
	if len(rest) > maxLine {
		l.emit(rest)
		rest = nil
	}
	l.buf = append(l.buf[:0], rest...)
	return len(b), nil
}

// flush logs a partial last line, at the end of a request.
func (l *lineLogger) flush() {
	l.emit(l.buf)
	l.buf = l.buf[:0]
}

func (l *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	l.log.Warn("php-cgi stderr", "pid", l.pid.Load(), "line", string(line))
}
