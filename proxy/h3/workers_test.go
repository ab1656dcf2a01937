package h3

import (
	"io"
	"testing"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// TestStreamsReuseWorkers: one request after the other, each stream is
// served by a goroutine that served one before (its stack grown), not a
// new one each.
func TestStreamsReuseWorkers(t *testing.T) {
	e := startEnv(t, echoHandler, nil)
	c, _ := e.client(t)
	before := streamctx.Shared.Started()
	const requests = 50
	for range requests {
		resp, err := c.Get(e.url("/x"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n := streamctx.Shared.Started() - before; n > requests/5 {
		t.Fatalf("%d goroutines started for %d streams served one after the other", n, requests)
	}
}
