package origin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// TestSaturatedOriginAnswersBusy: with every connection busy, MaxQueue
// requests wait and the next fails at once with ErrBusy; a waiting one
// that gets no connection in time fails with ErrBusy too, and neither
// marks the server down.
func TestSaturatedOriginAnswersBusy(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered <- struct{}{}
			<-release
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	p := newTestPool(t, Config{Servers: []string{srv.URL}, MaxConns: 1, MaxQueue: 1, ConnectTimeout: 300 * time.Millisecond})

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(1)
	go func() { defer wg.Done(); _, _, err := do(p, srv.URL+"/slow"); errs <- err }()
	<-entered // the one connection is taken
	wg.Add(1)
	go func() { defer wg.Done(); _, _, err := do(p, srv.URL+"/"); errs <- err }() // queued
	testbed.WaitFor(t, 5*time.Second, "the second request to queue", func() bool { return p.asking.Load() == 2 })
	if _, _, err := do(p, srv.URL+"/"); !errors.Is(err, ErrBusy) {
		t.Fatalf("past the queue: %v, want ErrBusy", err)
	}
	if err := <-errs; !errors.Is(err, ErrBusy) { // the queued one ran out of wait
		t.Fatalf("queued past connect_timeout: %v, want ErrBusy", err)
	}
	close(release)
	wg.Wait()
	if err := <-errs; err != nil {
		t.Fatalf("the slow request: %v", err)
	}
	if code, body, err := do(p, srv.URL+"/"); err != nil || code != 200 || body != "ok" {
		t.Fatalf("after the load: %d %q %v (the server must not be marked down)", code, body, err)
	}
}
