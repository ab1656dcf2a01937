package phppool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"time"
)

// Do runs one request on a worker (see Conn.Do for the arguments; a nil
// stderr sends the FastCGI stderr stream to the pool's log): Begin, then
// the Response read to its end into stdout. If stdout fails (the client
// went away) the rest is drained, the worker kept, and the stdout error
// returned. A stdout that is an OutputEnder learns of a complete response
// before the worker goes to the next request.
func (p *Pool) Do(ctx context.Context, params []Param, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	r, err := p.Begin(ctx, params, stdin, stderr)
	if err != nil {
		return 0, err
	}
	if e, ok := stdout.(OutputEnder); ok {
		r.onEnd = e.EndOutput
	}
	for {
		b, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			return r.status, nil
		case err != nil:
			return r.status, err
		}
		if stdout == nil {
			continue
		}
		if _, err := stdout.Write(b); err != nil {
			r.drain(fmt.Errorf("phppool: write response: %w: %w", errStdout, err))
			return r.status, r.err
		}
	}
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

// Begin sends one request to a worker and returns once the first of the
// script's output arrived, or the response ended; the caller reads the
// rest with Next (or Read) as the worker writes it, in its own goroutine,
// and must read to io.EOF or Close. It takes the most recently used idle
// worker, resuming it if suspended, spawns one if fewer than Max
// processes run, or waits up to QueueWait and returns ErrBusy. A worker
// whose Conn broke or that served MaxRequests or grew past MaxRSS is
// retired and replaced on demand. params are not used once Begin returns.
//
// Errors: ErrTimeout past RequestTimeout or the caller's deadline (a
// worker running the request is killed), ErrWorkerFailed when the worker
// died or broke the protocol, the caller's ctx error when it was
// cancelled (the worker is retired: its Conn is broken), ErrClientGone
// (WithClient). A worker that fails before sending any byte gets the
// request retried once on another worker, as nginx's fastcgi_next_upstream
// does: only if the body was not read at all and the method is not POST,
// LOCK or PATCH, unless sending the request itself failed.
func (p *Pool) Begin(ctx context.Context, params []Param, stdin io.Reader, stderr io.Writer) (*Response, error) {
	r, retry, err := p.open(ctx, params, stdin, stderr)
	if !retry {
		return r, err
	}
	p.stats.retries.Add(1)
	p.log.Info("php worker failed before responding; retrying on another worker",
		"script", paramValue(params, "SCRIPT_FILENAME"), "err", err)
	p.dropExitedIdle()
	r, _, err = p.open(ctx, params, stdin, stderr)
	return r, err
}

// Response is a request's output as its worker sends it (Begin). It
// belongs to one goroutine.
type Response struct {
	p         *Pool
	w         *worker
	ctx       context.Context
	stderr    io.Writer
	logStderr bool   // stderr is the worker's log, flushed at the end
	script    string // SCRIPT_FILENAME for the slow-request log; "" when that is off
	start     time.Time
	first     []byte // the output Begin waited for, not yet returned
	pending   []byte // what Read has not copied out of the last piece
	onEnd     func()
	status    int
	done      bool  // the exchange is over, the worker released
	err       error // why it ended early; nil: complete
}

// open makes one attempt: a worker, the request sent, the first output
// awaited. retry reports a failure that allows another worker.
func (p *Pool) open(ctx context.Context, params []Param, stdin io.Reader, stderr io.Writer) (*Response, bool, error) {
	w, err := p.acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	p.stats.requests.Add(1)
	r := &Response{p: p, w: w, ctx: ctx, stderr: stderr, start: time.Now()}
	if p.cfg.SlowRequest > 0 {
		r.script = paramValue(params, "SCRIPT_FILENAME")
	}
	if stderr == nil { // PHP's error_log and warnings go to the pool's log
		r.stderr, r.logStderr = w.errLog, true
	}
	var deadline time.Time
	if p.cfg.RequestTimeout > 0 {
		deadline = r.start.Add(p.cfg.RequestTimeout)
	}
	b, err := r.send(deadline, params, stdin)
	if err != nil && !errors.Is(err, io.EOF) && p.redialFresh(ctx, w, err) {
		b, err = r.send(deadline, params, stdin)
	}
	switch {
	case err == nil:
		r.first = b
		return r, false, nil
	case errors.Is(err, io.EOF): // complete, without output
		r.finish(nil, nil)
		return r, false, nil
	}
	retry := r.finish(err, params)
	return nil, retry, r.err
}

// send begins the request on the worker's Conn and reads up to its first
// output: returned with the exchange still open; or io.EOF (the response
// ended, nothing in it) or a failure, the exchange over.
func (r *Response) send(deadline time.Time, params []Param, stdin io.Reader) ([]byte, error) {
	c := r.w.conn.Load()
	if err := c.begin(r.ctx, deadline, params, stdin); err != nil {
		return nil, err
	}
	b, err := c.next(r.stderr)
	if err == nil {
		return b, nil
	}
	status, eerr := c.end()
	r.status = status
	if eerr != nil {
		return nil, eerr
	}
	return nil, io.EOF
}

// Next returns the next piece of the script's output, valid until the
// following call; io.EOF once the response is complete and the worker
// back in the pool, the failure if it ended otherwise.
func (r *Response) Next() ([]byte, error) {
	if b := r.first; b != nil {
		r.first = nil
		return b, nil
	}
	if r.done {
		if r.err != nil {
			return nil, r.err
		}
		return nil, io.EOF
	}
	c := r.w.conn.Load()
	b, err := c.next(r.stderr)
	if err == nil {
		return b, nil
	}
	status, eerr := c.end()
	r.status = status
	r.finish(eerr, nil)
	return r.Next()
}

// Read copies out the script's output (Next for an io.Reader).
func (r *Response) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		b, err := r.Next()
		if err != nil {
			return 0, err
		}
		r.pending = b
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// Buffered is how much output has arrived and not been returned yet
// (record framing included): a caller writing to a client can wait for
// more before it writes, to send fewer and larger pieces.
func (r *Response) Buffered() int {
	n := len(r.first) + len(r.pending)
	if !r.done {
		n += r.w.conn.Load().buffered()
	}
	return n
}

// Status is the application status END_REQUEST carried (0 until then).
func (r *Response) Status() int { return r.status }

// Close ends a Response its caller stops reading before io.EOF (its
// client went away): the rest is read and thrown away, in the background
// — the script may run on for a while — so the worker can serve again.
// After io.EOF or a failure it does nothing; the caller must not use r
// after Close.
func (r *Response) Close() error {
	if r.done {
		return nil
	}
	r.first, r.pending = nil, nil
	p := r.p
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.wg.Add(1) // the pool's Close waits for the drain
	}
	p.mu.Unlock()
	if closed { // the workers are being killed: nothing to drain for
		r.w.conn.Load().fail()
		r.drain(fmt.Errorf("phppool: response abandoned: %w", ErrClosed))
		return nil
	}
	go func() {
		defer p.wg.Done()
		r.drain(fmt.Errorf("phppool: response abandoned: %w", errStdout))
	}()
	return nil
}

// drain reads the rest of the exchange, discarding it, and ends the
// Response with why (a stdout failure unless the exchange failed).
func (r *Response) drain(why error) {
	if r.done {
		return
	}
	c := r.w.conn.Load()
	c.drain()
	status, err := c.end()
	r.status = status
	if err == nil {
		err = why
	}
	r.finish(err, nil)
}

// finish accounts for the ended exchange and gives the worker back (to
// the pool, or retired as err says). With params (a failure before any
// output) it reports whether the request may go to another worker.
func (r *Response) finish(err error, params []Param) (retry bool) {
	p, w := r.p, r.w
	r.done, r.first, r.pending = true, nil, nil
	if r.logStderr {
		w.errLog.flush() // before release: the next request reuses it
	}
	end := time.Now()
	ex := w.conn.Load().lastExchange()
	p.noteResume(w, ex, end)
	if d := end.Sub(r.start); p.cfg.SlowRequest > 0 && d >= p.cfg.SlowRequest {
		p.log.Warn("slow php request", "pid", w.pid, "script", r.script, "duration", d, "err", err)
	}
	if err == nil {
		if r.onEnd != nil {
			r.onEnd()
		}
		if p.release(w, release{overRSS: p.overRSS(w)}) {
			// The worker went to a request that waited for it: let that
			// one send its request before this one writes its response,
			// so the worker is not idle meanwhile (the waiter was readied
			// last, and Go runs it next).
			runtime.Gosched()
		}
		return false
	}
	r.err, retry = p.failed(r.ctx, w, err, ex, params)
	return retry
}

// failed classifies a failed request, retires the worker as needed and
// wraps err with the sentinel the caller maps to a status code.
func (p *Pool) failed(ctx context.Context, w *worker, err error, ex exchange, params []Param) (error, bool) {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		p.stats.timeouts.Add(1)
		p.release(w, release{kill: true}) // it may be looping; SIGTERM would not end it
		return fmt.Errorf("phppool: pool %q worker %d: %w: %w", p.cfg.Name, w.pid, ErrTimeout, err), false
	case ctx.Err() != nil, errors.Is(err, errStdout), errors.Is(err, ErrRequestBody), errors.Is(err, ErrClosed):
		// The client went away or its body failed: not the worker's fault.
		// release retires the worker if its Conn broke.
		p.release(w, release{})
		return fmt.Errorf("phppool: pool %q worker %d: %w", p.cfg.Name, w.pid, err), false
	}
	p.release(w, release{failed: err})
	err = fmt.Errorf("phppool: pool %q worker %d: %w: %w", p.cfg.Name, w.pid, ErrWorkerFailed, err)
	return err, params != nil && mayRetry(params, ex)
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
