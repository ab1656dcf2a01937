package h2

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/internal/testbed"
)

// Shutdown with an open HTTP/2 connection and a stream in flight: the
// stream finishes with its whole body, the connection gets GOAWAY, and
// Shutdown returns once it is done, long before its deadline.
func TestGracefulShutdownFinishesInFlightStream(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	env := startTLS(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/slow" {
			started <- struct{}{}
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
		}
		ctx.SetBody(bigBody[:64<<10])
	}, nil)
	c := env.h2Client(t)
	get(t, c, env.url("/")) // an open connection, idle between streams
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Get(env.url("/slow"))
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- result{len(b), err}
	}()
	<-started
	shut := make(chan error, 1)
	begin := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- env.srv.Shutdown(ctx)
	}()
	// New connections are refused while the stream is still running.
	testbed.WaitFor(t, 2*time.Second, "new connections refused", func() bool {
		c, err := net.DialTimeout("tcp", env.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a stream in flight", err)
	default:
	}
	close(release)
	r := <-done
	if r.err != nil || r.n != 64<<10 {
		t.Fatalf("in-flight stream: %d bytes, %v", r.n, r.err)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Shutdown returned %v after it began", time.Since(begin))
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return after the last stream finished")
	}
}

// A stream that never finishes is cut when Shutdown's context ends, and
// Shutdown returns soon after.
func TestShutdownDeadlineClosesStuckStreams(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	env := startTLS(t, func(ctx *fasthttp.RequestCtx) {
		started <- struct{}{}
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
	}, nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := env.h2Client(t).Get(env.url("/"))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := env.srv.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Error("the cut stream reported success")
		}
	case <-time.After(3 * time.Second):
		t.Error("the client's stream was not cut")
	}
}

// Shutdown with only idle HTTP/2 and HTTP/1.1 connections returns
// promptly (GOAWAY closes the idle h2 one), once the h2 connection's own
// goroutine (detach.go) has ended.
func TestShutdownWithIdleConnections(t *testing.T) {
	env := startTLS(t, echo, nil)
	get(t, env.h2Client(t), env.url("/"))
	get(t, env.h1Client(t), env.url("/"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	begin := time.Now()
	if err := env.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("Shutdown with idle h1 and h2 connections: %v", time.Since(begin))
	if left := connGoroutines(); len(left) > 0 {
		t.Errorf("Shutdown returned with %d connections still served:\n%s", len(left), left[0])
	}
	if _, err := env.h2Client(t).Get(env.url("/")); err == nil {
		t.Error("a request succeeded after Shutdown")
	}
}

// blockedAfterClientLeft starts a server whose handler blocks until
// release is closed, sends it one stream on a raw connection and closes
// that connection while the handler runs: the stream's worker then
// outlives its connection, which the server has forgotten on return.
// finished is set when the handler returns.
func blockedAfterClientLeft(t *testing.T) (env *tlsEnv, release chan struct{}, finished *atomic.Bool) {
	t.Helper()
	started := make(chan struct{}, 1)
	release = make(chan struct{})
	finished = new(atomic.Bool)
	env = startTLS(t, func(ctx *fasthttp.RequestCtx) {
		started <- struct{}{}
		<-release
		finished.Store(true)
	}, nil)
	r := dialRaw(t, env)
	r.get(1, "/block")
	<-started
	r.c.Close()
	testbed.WaitFor(t, 5*time.Second, "the connection closed", func() bool {
		return len(env.srv.conns.Open()) == 0
	})
	return env, release, finished
}

// A client that leaves while its stream's handler runs leaves no
// connection to drain, but Shutdown still waits for that handler.
func TestShutdownWaitsForHandlerOfStreamWhoseClientLeft(t *testing.T) {
	env, release, finished := blockedAfterClientLeft(t)
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := env.srv.Shutdown(ctx)
		if !finished.Load() {
			err = errors.Join(err, errors.New("Shutdown returned before the handler finished"))
		}
		shut <- err
	}()
	// The listener closing shows Shutdown began; it must still wait.
	testbed.WaitFor(t, 2*time.Second, "the listener closed", func() bool {
		c, err := net.DialTimeout("tcp", env.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return after the handler finished")
	}
	if n := env.srv.streams.Running(); n != 0 {
		t.Errorf("%d streams running after Shutdown", n)
	}
}

// A handler still running when Shutdown's context ends fails Shutdown
// with the deadline and stays counted until it returns.
func TestShutdownDeadlineReportsStreamWorkerStillRunning(t *testing.T) {
	env, release, _ := blockedAfterClientLeft(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := env.srv.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 streams still running") {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded naming 1 running stream worker", err)
	}
	if n := env.srv.streams.Running(); n != 1 {
		t.Errorf("%d streams counted at the deadline, want 1", n)
	}
	close(release)
	testbed.WaitFor(t, 5*time.Second, "the handler to finish", func() bool { return env.srv.streams.Running() == 0 })
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
