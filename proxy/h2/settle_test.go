package h2

import (
	"net/http"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
	"github.com/ramjet-proxy/ramjet/proxy/conns"
)

// TestIdleHTTP2ConnectionsCountForTheBurstRelease: an HTTP/2
// connection waiting idle on its socket is counted with the parked ones
// whose bursts have memory given back (conns.WaitingIdle), and no longer
// once its client has gone.
func TestIdleHTTP2ConnectionsCountForTheBurstRelease(t *testing.T) {
	if !testbed.Poll(5*time.Second, func() bool { return conns.Waiting() == 0 }) {
		t.Fatalf("%d connections of earlier tests still wait", conns.Waiting())
	}
	e := startTLS(t, page725Handler, nil)
	const n = 3
	var trs []*http.Client
	for range n {
		c := e.h2Client(t)
		if resp, _ := get(t, c, e.url("/page")); resp.ProtoMajor != 2 {
			t.Fatalf("proto %s, want HTTP/2", resp.Proto)
		}
		trs = append(trs, c)
	}
	if !testbed.Poll(5*time.Second, func() bool { return conns.Waiting() == n }) {
		t.Fatalf("%d idle HTTP/2 connections counted, want %d", conns.Waiting(), n)
	}
	for _, c := range trs {
		c.CloseIdleConnections()
	}
	if !testbed.Poll(5*time.Second, func() bool { return conns.Waiting() == 0 }) {
		t.Fatalf("%d counted after their clients closed, want 0", conns.Waiting())
	}
}
