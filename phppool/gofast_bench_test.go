package phppool

// Compares ramjet's pool with github.com/yookoala/gofast on the same
// php-cgi and script, as the issue measured. This file is the only user
// of gofast. Run:
//
//	go test -run=NONE -bench=PHPClients -benchtime=3s ./phppool/

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yookoala/gofast"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

const (
	benchWorkers     = 4
	benchConcurrency = 20
	// benchRequestTimeout bounds one request; a stalled client must not
	// hang the benchmark.
	benchRequestTimeout = time.Second
	// benchBudget bounds one sub-benchmark run in wall time; after it the
	// remaining iterations are skipped and the run reports a stall.
	benchBudget = 15 * time.Second
)

// discardResponse is an http.ResponseWriter that keeps only the status.
type discardResponse struct {
	h      http.Header
	status int
}

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardResponse) WriteHeader(code int)        { d.status = code }

// gofastDo runs one request through a gofast client factory, bounded by
// benchRequestTimeout; a client that failed is closed, not reused.
func gofastDo(factory gofast.ClientFactory, params map[string]string) error {
	ctx, cancel := context.WithTimeout(context.Background(), benchRequestTimeout)
	defer cancel()
	c, err := createClient(ctx, factory)
	if err != nil {
		return err
	}
	raw, err := http.NewRequestWithContext(ctx, "GET", "http://bench.test/hello.php", nil)
	if err != nil {
		return err
	}
	req := gofast.NewRequest(raw)
	req.Params = params
	resp, err := c.Do(req)
	if err != nil {
		discard(c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	var errOut bytes.Buffer
	w := &discardResponse{h: http.Header{}}
	err = resp.WriteTo(w, &errOut)
	switch {
	case ctx.Err() != nil: // gofast reports its timeout only on stderr
		err = ctx.Err()
	case err == nil && w.status != http.StatusOK:
		err = fmt.Errorf("status %d, stderr %q", w.status, errOut.String())
	}
	if err != nil {
		discard(c)
		return err
	}
	return c.Close() // a pooled client goes back to its pool
}

// createClient calls factory, giving up at ctx's end: ClientPool blocks
// when its channel is empty.
func createClient(ctx context.Context, factory gofast.ClientFactory) (gofast.Client, error) {
	type result struct {
		c   gofast.Client
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := factory()
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() { // the factory call ends eventually; its client is dropped
			if r := <-ch; r.c != nil {
				discard(r.c)
			}
		}()
		return nil, ctx.Err()
	}
}

// discard closes c's connection without returning it to a ClientPool.
func discard(c gofast.Client) {
	if pc, ok := c.(*gofast.PoolClient); ok {
		c = pc.Client
	}
	// A failed client; its close error changes nothing.
	_ = c.Close()
}

// loadResult is one sub-benchmark's outcome.
type loadResult struct {
	ok, failed, timeouts atomic.Int64
	stalled              atomic.Bool
}

// runLoad runs do from benchConcurrency goroutines for b.N requests in
// all, skipping the rest once benchBudget passed, and reports req/s,
// failures and timeouts.
func runLoad(b *testing.B, do func() error) {
	var r loadResult
	b.SetParallelism(max(1, benchConcurrency/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	deadline := time.Now().Add(benchBudget)
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r.stalled.Load() {
				continue
			}
			if time.Now().After(deadline) {
				r.stalled.Store(true)
				continue
			}
			switch err := do(); {
			case err == nil:
				r.ok.Add(1)
			case errors.Is(err, context.DeadlineExceeded):
				r.timeouts.Add(1)
			default:
				r.failed.Add(1)
			}
		}
	})
	elapsed := time.Since(start)
	b.ReportMetric(float64(r.ok.Load())/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(r.timeouts.Load()), "timeouts")
	b.ReportMetric(float64(r.failed.Load()), "errors")
	if r.stalled.Load() {
		b.Logf("stalled: %d of %d requests done in %v (budget %v)", r.ok.Load(), b.N, elapsed, benchBudget)
	}
}

func BenchmarkPHPClients(b *testing.B) {
	if testing.Short() {
		b.Skip("runs php-cgi")
	}
	script := testdataScript(b, "hello.php")
	params := scriptParams(script, "GET", "")
	paramMap := map[string]string{}
	for _, p := range params {
		paramMap[p.Name] = p.Value
	}

	b.Run("gofast-pool", func(b *testing.B) {
		addr := testbed.StartPHPCGI(b, benchWorkers)
		// NewClientPool's dialing goroutine never stops; it leaks for the
		// rest of the benchmark binary, blocked on its full channel.
		pool := gofast.NewClientPool(gofast.SimpleClientFactory(gofast.SimpleConnFactory("tcp", addr)), benchWorkers, time.Minute)
		runLoad(b, func() error { return gofastDo(pool.CreateClient, paramMap) })
	})
	b.Run("gofast-dial", func(b *testing.B) {
		addr := testbed.StartPHPCGI(b, benchWorkers)
		factory := gofast.SimpleClientFactory(gofast.SimpleConnFactory("tcp", addr))
		runLoad(b, func() error { return gofastDo(factory, paramMap) })
	})
	b.Run("ramjet-pool", func(b *testing.B) {
		// No recycling, like the php-cgi above (PHP_FCGI_MAX_REQUESTS=0):
		// the comparison is of clients, not of respawn cost.
		p := startPool(b, Config{Min: benchWorkers, Max: benchWorkers, MaxRequests: 1 << 30}, nil)
		runLoad(b, func() error { return poolDo(p, params) })
	})
}

// poolDo runs one request and parses the response head, as the proxy does.
func poolDo(p *Pool, params []Param) error {
	ctx, cancel := context.WithTimeout(context.Background(), benchRequestTimeout)
	defer cancel()
	var out bytes.Buffer
	if _, err := p.Do(ctx, params, nil, &out, nil); err != nil {
		return err
	}
	status, _, err := ReadResponseHead(bufioReader(out.Bytes()))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d", status)
	}
	return err
}
