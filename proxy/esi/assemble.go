package esi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Fetcher returns a fragment's body for an include (the proxy fetches it
// through its cache). depth is the nesting level of the include (1 for
// includes of the page). A returned error means the fragment failed. It must
// return promptly once ctx is done.
type Fetcher func(ctx context.Context, inc *Include, src string, depth int) ([]byte, error)

// AssembleConfig tunes Assemble. Zero values take the defaults.
type AssembleConfig struct {
	MaxDepth int           // deepest include level fetched; default 3
	Timeout  time.Duration // per fetch attempt (src, then alt); default 2s
	Parallel int           // max concurrent fetches per level of a page; default 8
}

// Report describes one include point after assembly.
type Report struct {
	Src   string        // the include's src (an inline's name)
	Err   error         // nil: src served; ErrAltServed in the chain: alt served; else the block was empty
	Took  time.Duration // fetch time, src and alt together
	Depth int           // 1 for includes of the page
}

// Errors in Report.Err that callers branch on.
var (
	ErrAltServed       = errors.New("esi: src failed, alt served")
	ErrMaxDepth        = errors.New("esi: include nested deeper than MaxDepth")
	ErrTooManyIncludes = errors.New("esi: too many fragments for one page")
)

const (
	defaultMaxDepth = 3
	defaultTimeout  = 2 * time.Second
	defaultParallel = 8
	// nestedBudget is how many fetches nested fragments may add to a page's own includes.
	nestedBudget = 256
)

func (c AssembleConfig) withDefaults() AssembleConfig {
	if c.MaxDepth <= 0 {
		c.MaxDepth = defaultMaxDepth
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.Parallel <= 0 {
		c.Parallel = defaultParallel
	}
	return c
}

// Assemble writes the document to w: it fetches every include of a level in
// parallel (bounded by Parallel, each attempt bounded by Timeout), then
// writes the segments in order, assembling fragments that contain markup
// recursively up to MaxDepth. It returns one Report per include point,
// nested ones after their parent's, and an error only when w fails.
func Assemble(ctx context.Context, w io.Writer, doc *Document, fetch Fetcher, cfg AssembleConfig) ([]Report, error) {
	if doc == nil {
		return nil, nil
	}
	a := assembler{w: w, fetch: fetch, cfg: cfg.withDefaults(), budget: doc.Includes + nestedBudget}
	if doc.Includes > 0 {
		a.reports = make([]Report, 0, doc.Includes)
	}
	err := a.level(ctx, doc, 1)
	return a.reports, err
}

// assembler is the state of one Assemble call; levels run one at a time.
type assembler struct {
	w       io.Writer
	fetch   Fetcher
	cfg     AssembleConfig
	budget  int // fetches left for this page
	reports []Report
}

// result is what one include point produced.
type result struct {
	body []byte
	err  error
	took time.Duration
}

// level is the per-level state, pooled. work is bound once to run on a
// goroutine without allocating.
type level struct {
	parent  context.Context // the caller's ctx (alt attempts time out from it)
	ctx     context.Context // shared deadline for the level, or parent when per fetch
	perCall bool            // each fetch gets its own timeout
	fetch   Fetcher
	timeout time.Duration
	depth   int
	incs    []*Include // include points of the level, in order
	pending []int      // indexes into incs still to fetch
	results []result   // parallel to incs
	next    atomic.Int64
	wg      sync.WaitGroup
	work    func()
}

var levelPool = sync.Pool{New: func() any {
	l := new(level)
	l.work = func() { l.drain(); l.wg.Done() }
	return l
}}

func (a *assembler) level(ctx context.Context, doc *Document, depth int) error {
	if doc.Includes == 0 {
		return a.writeLiterals(doc)
	}
	l := levelPool.Get().(*level)
	defer l.release()
	l.parent, l.fetch, l.timeout, l.depth = ctx, a.fetch, a.cfg.Timeout, depth
	for _, s := range doc.Segments {
		if s.Include != nil {
			l.incs = append(l.incs, s.Include)
		}
	}
	l.results = append(l.results, make([]result, len(l.incs))...)
	a.plan(l)
	l.fetchAll(a.cfg.Parallel)

	k := 0
	for _, s := range doc.Segments {
		if s.Include == nil {
			if _, err := a.w.Write(s.Literal); err != nil {
				return err
			}
			continue
		}
		r := &l.results[k]
		k++
		a.reports = append(a.reports, Report{Src: s.Include.Src, Err: r.err, Took: r.took, Depth: depth})
		if err := a.writeBody(ctx, r.body, depth); err != nil {
			return err
		}
	}
	return nil
}

// plan decides which include points are fetched: inline bodies need no
// fetch, levels beyond MaxDepth and fetches beyond the budget get errors.
func (a *assembler) plan(l *level) {
	for i, inc := range l.incs {
		switch {
		case inc.Inline != nil:
			l.results[i].body = inc.Inline
		case l.depth > a.cfg.MaxDepth:
			l.results[i].err = fmt.Errorf("esi: include %q at depth %d: %w", inc.Src, l.depth, ErrMaxDepth)
		case a.budget <= 0:
			l.results[i].err = fmt.Errorf("esi: include %q: %w", inc.Src, ErrTooManyIncludes)
		default:
			a.budget--
			l.pending = append(l.pending, i)
		}
	}
}

// writeBody writes a fragment, assembling it one level deeper if it has markup.
func (a *assembler) writeBody(ctx context.Context, body []byte, depth int) error {
	if !HasMarkup(body) {
		_, err := a.w.Write(body)
		return err
	}
	doc, _ := Parse(body, DefaultMaxIncludes) // malformed markup in fragments is not counted
	return a.level(ctx, doc, depth+1)
}

func (a *assembler) writeLiterals(doc *Document) error {
	for _, s := range doc.Segments {
		if _, err := a.w.Write(s.Literal); err != nil {
			return err
		}
	}
	return nil
}

// fetchAll runs l.pending on up to parallel workers, the caller being one, and
// returns when all fetches have returned.
func (l *level) fetchAll(parallel int) {
	n := len(l.pending)
	if n == 0 {
		return
	}
	l.ctx, l.perCall = l.parent, n > parallel
	if !l.perCall { // all start now: one deadline serves every fetch
		var cancel context.CancelFunc
		l.ctx, cancel = context.WithTimeout(l.parent, l.timeout)
		defer cancel()
	}
	l.next.Store(0)
	workers := min(n, parallel)
	l.wg.Add(workers - 1)
	for range workers - 1 {
		go l.work()
	}
	l.drain()
	l.wg.Wait()
}

func (l *level) drain() {
	for {
		i := int(l.next.Add(1)) - 1
		if i >= len(l.pending) {
			return
		}
		l.fetchOne(l.pending[i])
	}
}

// fetchOne fetches src, then alt on failure, into l.results[k].
func (l *level) fetchOne(k int) {
	inc, start := l.incs[k], time.Now()
	ctx, cancel := l.ctx, context.CancelFunc(nil)
	if l.perCall {
		ctx, cancel = context.WithTimeout(l.parent, l.timeout)
	}
	body, err := l.fetch(ctx, inc, inc.Src, l.depth)
	if cancel != nil {
		cancel()
	}
	if err != nil {
		body, err = l.fallback(inc, err)
	}
	l.results[k] = result{body: body, err: err, took: time.Since(start)}
}

func (l *level) fallback(inc *Include, err error) ([]byte, error) {
	if inc.Alt == "" {
		return nil, fmt.Errorf("esi: include %q: %w", inc.Src, err)
	}
	ctx, cancel := context.WithTimeout(l.parent, l.timeout)
	defer cancel()
	body, altErr := l.fetch(ctx, inc, inc.Alt, l.depth)
	if altErr != nil {
		return nil, fmt.Errorf("esi: include %q: %w; alt %q: %w", inc.Src, err, inc.Alt, altErr)
	}
	return body, fmt.Errorf("esi: include %q: %w: %w", inc.Src, ErrAltServed, err)
}

// release clears references and returns l to the pool.
func (l *level) release() {
	clear(l.incs)
	clear(l.results)
	l.incs, l.pending, l.results = l.incs[:0], l.pending[:0], l.results[:0]
	l.parent, l.ctx, l.fetch = nil, nil, nil
	levelPool.Put(l)
}
