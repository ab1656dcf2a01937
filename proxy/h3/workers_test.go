package h3

import (
	"io"
	"testing"
)

// TestStreamsReuseWorkers: one request after the other, each stream is
// served by a goroutine that served one before (its stack grown), not a
// new one each; Shutdown (the test's cleanup) ends them.
func TestStreamsReuseWorkers(t *testing.T) {
	e := startEnv(t, echoHandler, nil)
	c, _ := e.client(t)
	const requests = 50
	for range requests {
		resp, err := c.Get(e.url("/x"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := e.srv.workers.started.Load(); n > requests/5 {
		t.Fatalf("%d goroutines started for %d streams served one after the other", n, requests)
	}
}

// TestIdleWorkersAreBounded: a worker that finishes when
// maxIdleWorkers already wait ends instead of waiting too; after close,
// none waits.
func TestIdleWorkersAreBounded(t *testing.T) {
	w := newWorkers()
	w.idle.Store(maxIdleWorkers)
	if _, ok := w.next(); ok {
		t.Fatal("a worker waits with maxIdleWorkers waiting already")
	}
	if n := w.idle.Load(); n != maxIdleWorkers {
		t.Fatalf("idle %d after a worker ended, want %d", n, maxIdleWorkers)
	}
	w.idle.Store(0)
	w.close(true)
	if _, ok := w.next(); ok {
		t.Fatal("a worker waits after close")
	}
}
