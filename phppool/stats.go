package phppool

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Stats are a pool's counters since New.
type Stats struct {
	Requests uint64 // requests sent to workers, retries included
	Spawns   uint64 // workers started
	Crashes  uint64 // workers that died, or failed a request (ErrWorkerFailed), on their own
	Timeouts uint64 // requests past RequestTimeout or the caller's deadline
	Recycled uint64 // workers retired after MaxRequests or MaxRSS
	Busy     uint64 // Do calls that returned ErrBusy
	Retries  uint64 // requests retried after their worker failed before responding
	Resumes  uint64 // suspended workers resumed (SIGCONT) for a request
	// ClientGone: requests not run because their client went away while
	// they waited for a worker.
	ClientGone uint64

	// ResumeLatency: per resume, the time from SIGCONT to the worker's
	// first response record (or to the end of the request if it sent
	// none). It includes the script's time to its first output.
	ResumeLatency Histogram
}

// Histogram counts durations in fixed buckets.
type Histogram struct {
	Bounds []time.Duration // upper bounds (inclusive), ascending
	Counts []uint64        // per bucket; one more than Bounds, the last for larger ones
	Sum    time.Duration
}

// Count is the number of observations.
func (h Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Quantile returns the upper bound of the bucket holding the q-quantile
// (0 < q <= 1), or 0 without observations. For the overflow bucket it
// returns the last bound: the true value is larger.
func (h Histogram) Quantile(q float64) time.Duration {
	total := h.Count()
	if total == 0 || len(h.Bounds) == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank && i < len(h.Bounds) {
			return h.Bounds[i]
		}
	}
	return h.Bounds[len(h.Bounds)-1]
}

// resumeBounds are the resume latency buckets: a resumed php-cgi answers
// a trivial script in well under a millisecond unless it was swapped out.
var resumeBounds = [...]time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, time.Second,
}

// histogram is the lock-free form of Histogram over resumeBounds.
type histogram struct {
	counts [len(resumeBounds) + 1]atomic.Uint64
	sum    atomic.Int64
}

func (h *histogram) observe(d time.Duration) {
	i := 0
	for i < len(resumeBounds) && d > resumeBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

func (h *histogram) snapshot() Histogram {
	out := Histogram{Bounds: resumeBounds[:], Counts: make([]uint64, len(h.counts)), Sum: time.Duration(h.sum.Load())}
	for i := range h.counts {
		out.Counts[i] = h.counts[i].Load()
	}
	return out
}

// counters are the atomics behind Stats, updated on the request path.
type counters struct {
	requests, spawns, crashes, timeouts, recycled, busy, retries, resumes, clientGone atomic.Uint64
	resume                                                                            histogram
}

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	c := &p.stats
	return Stats{
		Requests:      c.requests.Load(),
		Spawns:        c.spawns.Load(),
		Crashes:       c.crashes.Load(),
		Timeouts:      c.timeouts.Load(),
		Recycled:      c.recycled.Load(),
		Busy:          c.busy.Load(),
		Retries:       c.retries.Load(),
		Resumes:       c.resumes.Load(),
		ClientGone:    c.clientGone.Load(),
		ResumeLatency: c.resume.snapshot(),
	}
}

// WorkerStatus describes one live worker.
type WorkerStatus struct {
	PID      int
	State    string // idle, busy or suspended
	Requests int
	Age      time.Duration
	RSS      int64 // resident memory in bytes; 0 if unknown
	PSS      int64 // proportional set size in bytes (shared pages split among their users); 0 if unknown
}

// MasterStatus describes the shared engine's master and the children it
// forked that no worker holds (they wait in accept, cheap until claimed).
type MasterStatus struct {
	PID    int   // 0: no master runs (the separate engine, or not started yet)
	Spares []int // its children that are not workers
	PSS    int64 // the master's and the spares' PSS in bytes, summed
}

// Queued is how many Do calls wait for a worker now.
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Status lists the live workers.
func (p *Pool) Status() []WorkerStatus {
	p.mu.Lock()
	now := time.Now()
	out := make([]WorkerStatus, 0, len(p.workers))
	ws := make([]*worker, 0, len(p.workers))
	for _, w := range p.workers {
		out = append(out, WorkerStatus{PID: w.pid, State: w.state.String(), Requests: w.requests, Age: now.Sub(w.started)})
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for i, w := range ws { // outside mu: /proc reads are syscalls
		out[i].RSS, _ = w.memory()
		out[i].PSS = pssOf(w.pid)
	}
	return out
}

// Master describes the shared engine's master and its unclaimed children.
// With Status it accounts for every process of the pool, for comparing
// its memory with php-fpm's (master and children).
func (p *Pool) Master() MasterStatus {
	m, ok := p.eng.(*master)
	if !ok {
		return MasterStatus{}
	}
	pid := m.pid()
	if pid == 0 {
		return MasterStatus{}
	}
	st := MasterStatus{PID: pid, PSS: pssOf(pid)}
	for _, c := range childrenOf(pid) {
		if !m.isWorker(c) {
			st.Spares = append(st.Spares, c)
			st.PSS += pssOf(c)
		}
	}
	return st
}

// pssOf reads the Pss line of /proc/PID/smaps_rollup, in bytes; 0 if it
// cannot. Only for status: the kernel walks every mapping.
func pssOf(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// Load is how much of the pool is in use: workers busy plus requests
// waiting for one, against the most workers it may run. A caller that
// has optional work (a crawler's miss) sends it only while some is spare.
func (p *Pool) Load() (busy, capacity int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy + len(p.queue), p.cfg.Max
}
