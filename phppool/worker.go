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

// worker is one php-cgi process with one keep-alive Conn: a process of
// its own on its own socket (separate engine, cmd set), or a child of the
// pool's master that accepted the Conn on the master's socket (shared
// engine, pidfd set). pid, cmd, pidfd, statm, started and exited are set
// before the worker is shared and never change; conn changes only when the
// request holding the worker redials (redialFresh), while Close may read it.
type worker struct {
	pid     int
	cmd     *exec.Cmd // the separate engine's process; nil for a master's child
	pidfd   *pidfd    // a master's child; nil for the separate engine
	sock    string    // the Unix socket it accepted its Conn on
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

// signal sends sig to the process; it fails once the process was reaped
// (or, for a master's child, has exited).
func (w *worker) signal(sig syscall.Signal) error {
	var err error
	if w.pidfd != nil {
		err = w.pidfd.signal(sig)
	} else {
		err = w.cmd.Process.Signal(sig)
	}
	if err != nil {
		return fmt.Errorf("phppool: signal %v to worker %d: %w", sig, w.pid, err)
	}
	return nil
}

// closeConn closes the worker's Conn, if it has one yet.
func (w *worker) closeConn() {
	if c := w.conn.Load(); c != nil {
		// The worker is being discarded; a close error changes nothing.
		_ = c.Close()
	}
}

// terminate resumes the process if it is stopped, sends SIGTERM, closes
// the Conn, sends SIGKILL after grace, and returns once the process was
// reaped. SIGTERM comes before the close: php-cgi's handler only marks the
// shutdown, and a worker that saw its connection close unmarked would go
// back to accept on its socket — a master's child could take a
// connection meant for another worker.
func (w *worker) terminate(grace time.Duration) {
	// Errors mean the process is already gone; the reaper has its status.
	_ = w.signal(syscall.SIGCONT)
	_ = w.signal(syscall.SIGTERM)
	w.closeConn()
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
	_ = w.signal(syscall.SIGKILL) // failure means it is gone
	w.closeConn()
	<-w.exited
}

// pageSize converts statm's page counts to bytes.
var pageSize = int64(os.Getpagesize())

// memory returns the worker's resident memory in bytes (statm's second
// field) and the part of it that is its own (resident less shared, the
// third field: the opcache's shared memory and mapped files are shared),
// or zeros if statm cannot be read. statm is reread in place, which costs
// one pread instead of an open per request.
func (w *worker) memory() (rss, own int64) {
	if w.statm == nil {
		return 0, 0
	}
	var buf [128]byte
	n, err := w.statm.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return 0, 0 // closed by the reaper, or the process is gone
	}
	f := bytes.Fields(buf[:n])
	if len(f) < 3 {
		return 0, 0
	}
	res, err := strconv.ParseInt(string(f[1]), 10, 64)
	shared, serr := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil || serr != nil {
		return 0, 0
	}
	return res * pageSize, (res - shared) * pageSize
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
