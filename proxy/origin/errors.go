package origin

import (
	"errors"
	"net"

	"github.com/valyala/fasthttp"
)

// Errors callers branch on to pick 502 or 504.
var (
	// ErrUnavailable: no origin server could be reached.
	ErrUnavailable = errors.New("origin: unavailable")
	// ErrTimeout: the origin did not answer within the deadline.
	ErrTimeout = errors.New("origin: timeout")
	// ErrBusy: every connection to the origin was in use and the queue
	// full, or the wait for one ran out (Config.MaxQueue): the origin is
	// saturated, not down.
	ErrBusy = errors.New("origin: saturated")
)

// classify wraps err in one of the exported sentinels.
func classify(addr string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return joinErr(ErrBusy, addr, err)
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout):
		if errors.Is(err, fasthttp.ErrDialTimeout) {
			return joinErr(ErrUnavailable, addr, err)
		}
		return joinErr(ErrTimeout, addr, err)
	case errors.As(err, &ne) && ne.Timeout():
		return joinErr(ErrTimeout, addr, err)
	default:
		return joinErr(ErrUnavailable, addr, err)
	}
}

type wrapped struct {
	kind error
	addr string
	err  error
}

func (w *wrapped) Error() string   { return w.kind.Error() + ": " + w.addr + ": " + w.err.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.kind, w.err} }

func joinErr(kind error, addr string, err error) error {
	return &wrapped{kind: kind, addr: addr, err: err}
}

// dialFailed reports whether err happened before anything was sent, so the
// request may be retried on another server.
func dialFailed(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true
	}
	return errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrNoFreeConns)
}
