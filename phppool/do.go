package phppool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Do runs one request on a worker (see Conn.Do for the arguments; a nil
// stderr sends the FastCGI stderr stream to the pool's log). It
// takes the most recently used idle worker, resuming it if suspended,
// spawns one if fewer than Max processes run, or waits up to QueueWait and
// returns ErrBusy. A worker whose Conn broke or that served MaxRequests or
// grew past MaxRSS is retired and replaced on demand.
//
// Errors: ErrTimeout past RequestTimeout or the caller's deadline (a
// worker running the request is killed), ErrWorkerFailed when the worker died or broke the
// protocol, the caller's ctx error when it was cancelled (the worker is
// retired: its Conn is broken). A worker that fails before sending any
// byte gets the request retried once on another worker, as nginx's
// fastcgi_next_upstream does: only if the body was not read at all and
// the method is not POST, LOCK or PATCH, unless sending the request
// itself failed.
//
// A stdout that is an OutputEnder learns of a complete response before
// the worker goes to the next request.
func (p *Pool) Do(ctx context.Context, params []Param, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	status, retry, err := p.attempt(ctx, params, stdin, stdout, stderr)
	if !retry {
		return status, err
	}
	p.stats.retries.Add(1)
	p.log.Info("php worker failed before responding; retrying on another worker",
		"script", paramValue(params, "SCRIPT_FILENAME"), "err", err)
	status, _, err = p.attempt(ctx, params, stdin, stdout, stderr)
	return status, err
}

// OutputEnder is a stdout told that the output is complete (END_REQUEST
// arrived, nothing failed) before the worker is handed on. Go runs the
// goroutine readied last first: ending the output and then handing the
// worker to a queued request starts that request before the reader sends
// its response, instead of behind every goroutine that became runnable
// meanwhile — the worker idles for less. The caller must not touch
// stdout after Do once EndOutput was called.
type OutputEnder interface {
	EndOutput()
}

// attempt runs the request on one worker; retry reports that it failed
// in a way that allows running it on another.
func (p *Pool) attempt(ctx context.Context, params []Param, stdin io.Reader, stdout, stderr io.Writer) (status int, retry bool, err error) {
	w, err := p.acquire(ctx)
	if err != nil {
		return 0, false, err
	}
	p.stats.requests.Add(1)
	start := time.Now()
	var deadline time.Time
	if p.cfg.RequestTimeout > 0 {
		deadline = start.Add(p.cfg.RequestTimeout)
	}
	logStderr := stderr == nil // PHP's error_log and warnings go to the pool's log
	if logStderr {
		stderr = w.errLog
	}
	status, err = w.conn.Load().do(ctx, deadline, params, stdin, stdout, stderr)
	if err != nil && p.redialFresh(ctx, w, err) {
		status, err = w.conn.Load().do(ctx, deadline, params, stdin, stdout, stderr)
	}
	if logStderr {
		w.errLog.flush() // before release: the next request reuses it
	}
	end := time.Now()
	ex := w.conn.Load().lastExchange()
	p.noteResume(w, ex, end)
	if d := end.Sub(start); p.cfg.SlowRequest > 0 && d >= p.cfg.SlowRequest {
		p.log.Warn("slow php request", "pid", w.pid, "script", paramValue(params, "SCRIPT_FILENAME"),
			"duration", d, "err", err)
	}
	if err == nil {
		if e, ok := stdout.(OutputEnder); ok {
			e.EndOutput()
		}
		p.release(w, release{overRSS: p.overRSS(w)})
		return status, false, nil
	}
	return p.failed(ctx, w, status, err, ex, params)
}

// failed classifies a failed request, retires the worker as needed and
// wraps err with the sentinel the caller maps to a status code.
func (p *Pool) failed(ctx context.Context, w *worker, status int, err error, ex exchange, params []Param) (int, bool, error) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		p.stats.timeouts.Add(1)
		p.release(w, release{kill: true}) // it may be looping; SIGTERM would not end it
		return status, false, fmt.Errorf("phppool: pool %q worker %d: %w: %w", p.cfg.Name, w.pid, ErrTimeout, err)
	case ctx.Err() != nil, errors.Is(err, errStdout), errors.Is(err, ErrRequestBody):
		// The client went away or its body failed: not the worker's fault.
		// release retires the worker if its Conn broke.
		p.release(w, release{})
		return status, false, fmt.Errorf("phppool: pool %q worker %d: %w", p.cfg.Name, w.pid, err)
	}
	p.release(w, release{failed: err})
	err = fmt.Errorf("phppool: pool %q worker %d: %w: %w", p.cfg.Name, w.pid, ErrWorkerFailed, err)
	return status, mayRetry(params, ex), err
}

// redialFresh gives a worker that never completed a request a new
// connection when its first one failed before anything was exchanged, and
// reports whether the request may be sent again on it. php-cgi closes a
// connection it accepted when no request arrives within 5 s
// (fcgi_accept_request's poll), and the pool connects when the worker
// starts: a worker idle that long before its first request holds a closed
// connection. PHP read nothing from it, so any request may be resent.
func (p *Pool) redialFresh(ctx context.Context, w *worker, err error) bool {
	if w.pidfd != nil {
		return false // a master's child: claimed with a first request, and its socket is the master's
	}
	c := w.conn.Load()
	ex := c.lastExchange()
	p.mu.Lock()
	used, retired := w.requests > 0, w.retired
	p.mu.Unlock()
	if used || retired || ex.received > 0 || ex.bodyRead > 0 || ctx.Err() != nil ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errStdout) || !w.alive() {
		return false
	}
	dctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	nc, derr := (&net.Dialer{}).DialContext(dctx, "unix", w.sock)
	if derr != nil {
		return false
	}
	w.conn.Store(NewConn(nc))
	_ = c.Close() // already broken; a close error changes nothing
	p.log.Debug("php worker's first connection was closed while idle; reconnected", "pool", p.cfg.Name, "pid", w.pid)
	return true
}

// mayRetry reports whether a request whose worker failed may be sent to
// another one (nginx's fastcgi_next_upstream rules): the worker sent
// nothing, none of the body was consumed (it is streamed, not kept), and
// the method is not POST, LOCK or PATCH unless sending the request failed.
func mayRetry(params []Param, ex exchange) bool {
	if ex.received > 0 || ex.bodyRead > 0 {
		return false
	}
	if ex.sendFirst {
		return true
	}
	switch paramValue(params, "REQUEST_METHOD") {
	case "POST", "LOCK", "PATCH":
		return false
	}
	return true
}

// paramValue returns the value of the first param called name.
func paramValue(params []Param, name string) string {
	for _, p := range params {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// noteResume records how long a resumed worker took from SIGCONT to its
// first response record, or to the end of the request if it sent none.
func (p *Pool) noteResume(w *worker, ex exchange, end time.Time) {
	if w.resumedAt.IsZero() {
		return
	}
	at := end
	if ex.received > 0 {
		at = ex.firstRecv
	}
	p.stats.resume.observe(at.Sub(w.resumedAt))
	w.resumedAt = time.Time{}
}

// overRSS reports whether w's resident memory exceeds MaxRSS.
func (p *Pool) overRSS(w *worker) bool {
	if p.cfg.MaxRSS <= 0 {
		return false
	}
	_, own := w.memory()
	return own > p.cfg.MaxRSS
}
