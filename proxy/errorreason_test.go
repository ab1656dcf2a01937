package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
)

// originErr is an error as proxy/origin returns it: a sentinel joined
// with the cause.
func originErr(kind, cause error) error {
	return errors.Join(kind, fmt.Errorf("127.0.0.1:1: %w", cause))
}

func TestErrorReasonNamesWhyTheOriginOrPHPFailed(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, c := range []struct {
		err  error
		want string
	}{
		{originErr(origin.ErrUnavailable, refused), "origin-refused"},
		{originErr(origin.ErrUnavailable, reset), "origin-reset"},
		{originErr(origin.ErrUnavailable, fasthttp.ErrConnectionClosed), "origin-closed"},
		{originErr(origin.ErrUnavailable, io.ErrUnexpectedEOF), "origin-closed"},
		{originErr(origin.ErrUnavailable, fasthttp.ErrDialTimeout), "origin-connect-timeout"},
		{originErr(origin.ErrUnavailable, errors.New("no route")), "origin-unavailable"},
		{originErr(origin.ErrTimeout, fasthttp.ErrTimeout), "origin-timeout"},
		{originErr(origin.ErrBusy, fasthttp.ErrNoFreeConns), "origin-busy"},
		{fmt.Errorf("%w: %w", ErrMustRevalidate, originErr(origin.ErrTimeout, fasthttp.ErrTimeout)), "must-revalidate"},
		{fmt.Errorf("%w: %w", ErrBodyRead, errors.New("short")), "origin-body"},
		{fmt.Errorf("pool: %w: %w", phppool.ErrWorkerFailed, io.EOF), "php-worker-failed"},
		{fmt.Errorf("pool: %w", phppool.ErrBusy), "php-busy"},
		{fmt.Errorf("pool: %w", phppool.ErrTimeout), "php-timeout"},
		{errUnreadableESI, "esi-coding"},
		{errors.New("something new"), "other"},
	} {
		if got := errorReason(c.err); got != c.want {
			t.Errorf("errorReason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestFailureOfGivesEachErrorItsStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{originErr(origin.ErrTimeout, fasthttp.ErrTimeout), fasthttp.StatusGatewayTimeout},
		{fmt.Errorf("pool: %w", phppool.ErrTimeout), fasthttp.StatusGatewayTimeout},
		{fmt.Errorf("%w: %w", ErrMustRevalidate, originErr(origin.ErrUnavailable, io.EOF)), fasthttp.StatusGatewayTimeout},
		{originErr(origin.ErrBusy, fasthttp.ErrNoFreeConns), fasthttp.StatusServiceUnavailable},
		{fmt.Errorf("pool: %w", phppool.ErrBusy), fasthttp.StatusServiceUnavailable},
		{fmt.Errorf("pool: %w", phppool.ErrClientGone), statusClientClosed},
		{fmt.Errorf("body: %w", fasthttp.ErrBodyTooLarge), fasthttp.StatusRequestEntityTooLarge},
		{fmt.Errorf("%w: absolute target", ErrBadRequest), fasthttp.StatusBadRequest},
		{originErr(origin.ErrUnavailable, io.EOF), fasthttp.StatusBadGateway},
		{errors.New("something new"), fasthttp.StatusBadGateway},
	} {
		if got := failureOf(c.err).status; got != c.want {
			t.Errorf("failureOf(%v).status = %d, want %d", c.err, got, c.want)
		}
	}
}
