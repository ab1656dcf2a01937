package main

import (
	"context"
	"sync"
)

// onStop runs stop once ctx is done. The function it returns must be
// called before the serving function returns: it keeps stop from running
// later, and waits for it if it already runs, so that nothing stop
// touches (a descriptor about to be reused) outlives the server.
func onStop(ctx context.Context, stop func()) (release func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ctx.Done():
			stop()
		case <-done:
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
