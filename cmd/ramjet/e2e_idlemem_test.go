package main_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// ownPagesOrigin answers every path with "page PATH", cacheable for 10
// minutes: a client that gets its own page got no other connection's
// answer (askOwnPage).
func ownPagesOrigin(t *testing.T) *httptest.Server {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		io.WriteString(w, "page "+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	return origin
}

// TestAConnectionIsParkedAsSoonAsItsFirstRequestIsAnswered: a client
// that sends one request and keeps its connection open has it parked as
// soon as the answer is out, not after the 20 ms linger: at a burst of
// new connections, hundreds of them lingering at once each held a
// goroutine, its stack and 20 KiB of read and write buffers (the peak of
// bench/run's idle row). Woken by its next request, each connection
// answers its own client, from the cache, and parks again.
func TestAConnectionIsParkedAsSoonAsItsFirstRequestIsAnswered(t *testing.T) {
	origin := ownPagesOrigin(t)
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
