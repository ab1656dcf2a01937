package main_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestAConnectionIsParkedAsSoonAsItsFirstRequestIsAnswered: a client
// that sends one request and keeps its connection open has it parked as
// soon as the answer is out, not after the 20 ms linger: at a burst of
// new connections, hundreds of them lingering at once each held a
// goroutine, its stack and 20 KiB of read and write buffers (the peak of
// bench/run's idle row). Woken by its next request, each connection
// answers its own client, from the cache, and parks again.
func TestAConnectionIsParkedAsSoonAsItsFirstRequestIsAnswered(t *testing.T) {
	origin := cachedOrigin(t)
	rj := startRamjet(t, origin.URL)
	parks := func() float64 {
		return metricValue(t, rj.AdminURL, `ramjet_client_connection_parks_total{listener="main"}`)
	}
	const n = 10
	clients := make([]*rawConn, n)
	fastest := time.Hour
	for i := range clients {
		before := parks()
		clients[i] = dialRaw(t, rj.Addr)
		askOwnPage(t, clients[i], i, false)
		answered := time.Now()
		if !testbed.Poll(10*time.Second, func() bool { return parks() > before }) {
			t.Fatalf("client %d: not parked after its answer", i)
		}
		fastest = min(fastest, time.Since(answered))
	}
	// The linger is 20 ms: a connection that waited it out was parked
	// 20 ms after its answer at the earliest.
	if fastest >= 15*time.Millisecond {
		t.Fatalf("the fastest of %d connections was parked %v after its answer: they lingered", n, fastest)
	}
	t.Logf("parked %v after the answer at the fastest", fastest)
	for i, c := range clients {
		askOwnPage(t, c, i, true)
	}
	waitParked(t, rj, n)
	for i, c := range clients {
		askOwnPage(t, c, i, true)
	}
}

// TestAReleaseAfterABurstOfIdleConnectionsLeavesEveryOneServing: once
// more than 1,024 connections went idle and no more arrive, ramjet gives
// memory back (two forced collections, conns/settle.go, on a goroutine
// the listener owns); every connection, HTTP/1.1 parked and HTTP/2 over
// TLS waiting on its socket, still answers its own client afterwards on
// the same connection, and none was closed.
func TestAReleaseAfterABurstOfIdleConnectionsLeavesEveryOneServing(t *testing.T) {
	origin := cachedOrigin(t)
	rj := startTLSRamjet(t, newPKI(t), origin.URL)
	forced := func() float64 { return metricValue(t, rj.AdminURL, "go_gc_forced_count") }
	before := forced()
	const n, h2n = 1100, 4 // past conns.releaseStep (1,024)
	clients := make([]*rawConn, n)
	for i := range clients {
		clients[i] = dialRaw(t, rj.Addr)
		askOwnPage(t, clients[i], i, false)
	}
	var dials atomic.Int32
	h2clients := make([]*http.Client, h2n)
	for i := range h2clients {
		tr := &http2.Transport{
			TLSClientConfig: &tls.Config{RootCAs: rj.pki.ca.Pool()},
			DialTLSContext: func(ctx context.Context, _, _ string, cfg *tls.Config) (net.Conn, error) {
				dials.Add(1)
				d := tls.Dialer{Config: cfg}
				return d.DialContext(ctx, "tcp", rj.TLSAddr)
			},
		}
		t.Cleanup(tr.CloseIdleConnections)
		h2clients[i] = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	}
	h2page := func(i int) {
		t.Helper()
		path := "/h2/" + strconv.Itoa(i)
		r := get(t, h2clients[i], rj.HTTPS("localhost", path))
		if r.Status != 200 || string(r.Body) != "page "+path {
			t.Fatalf("h2 client %d asked for %s: %d %q", i, path, r.Status, r.Body)
		}
	}
	for i := range h2clients {
		h2page(i)
	}
	waitParked(t, rj.Ramjet, n)
	if !testbed.Poll(20*time.Second, func() bool { return forced() >= before+2 }) {
		t.Fatalf("go_gc_forced_count %v, want %v or more: no release after %d connections went idle", forced(), before+2, n)
	}
	for i, c := range clients {
		askOwnPage(t, c, i, true)
	}
	for i := range h2clients {
		h2page(i)
	}
	if d := dials.Load(); d != h2n {
		t.Fatalf("%d HTTP/2 connections dialled for %d clients: one was closed", d, h2n)
	}
}
