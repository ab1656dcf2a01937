package docroot

import (
	"context"
	"fmt"
	"sync"
)

// inflight counts what a Handler has going — requests inside Do and the
// FastCGI exchanges still streaming a script's output — so that Close
// can wait for them. Unlike a WaitGroup it may be waited on while
// stragglers of a retired generation still come in.
type inflight struct {
	mu   sync.Mutex // guards n and idle
	n    int
	idle chan struct{} // closed when n drops to 0; nil while nobody waits
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

// wait returns once nothing is in flight, or with an error when ctx ends
// first.
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		n := f.n
		f.mu.Unlock()
		return fmt.Errorf("docroot: %d requests still running: %w", n, ctx.Err())
	}
}
