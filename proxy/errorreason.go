package proxy

import (
	"cmp"
	"errors"
	"io"
	"syscall"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/origin"
)

// errorHeader names, on every 5xx ramjet answers itself (writeError),
// why: one short token of errorReason's, as a CDN's error code tells
// "origin refused the connection" from "origin timed out" without the
// addresses and messages that only the process log carries. A soak or a
// monitor counts failures by it; a 5xx without it came from the origin.
const errorHeader = "Ramjet-Error"

// failure is what one kind of error means for the client: the status
// it gets and the token errorHeader carries ("" for the answers that
// are not a 5xx of ramjet's own).
type failure struct {
	err    error
	status int
	reason string
}

// failures is the one place that maps an error to the client's status
// and reason: the first rule whose error err wraps gives both, from the
// most precise to the broadest; anything else is a 502 "other".
var failures = []failure{
	{ErrMustRevalidate, fasthttp.StatusGatewayTimeout, "must-revalidate"},
	{origin.ErrTimeout, fasthttp.StatusGatewayTimeout, "origin-timeout"},
	{phppool.ErrTimeout, fasthttp.StatusGatewayTimeout, "php-timeout"},
	{origin.ErrBusy, fasthttp.StatusServiceUnavailable, "origin-busy"},
	{phppool.ErrBusy, fasthttp.StatusServiceUnavailable, "php-busy"},
	{phppool.ErrClientGone, statusClientClosed, ""},
	{fasthttp.ErrBodyTooLarge, fasthttp.StatusRequestEntityTooLarge, ""},
	{ErrBadRequest, fasthttp.StatusBadRequest, ""},
	{origin.ErrUnavailable, fasthttp.StatusBadGateway, "origin-unavailable"}, // made precise by unavailableRules
	{ErrBodyRead, fasthttp.StatusBadGateway, "origin-body"},
	{phppool.ErrWorkerFailed, fasthttp.StatusBadGateway, "php-worker-failed"},
	{phppool.ErrClosed, fasthttp.StatusBadGateway, "php-closed"},
	{phppool.ErrRejected, fasthttp.StatusBadGateway, "php-rejected"},
	{phppool.ErrResponseHead, fasthttp.StatusBadGateway, "php-response-head"},
	{phppool.ErrProtocol, fasthttp.StatusBadGateway, "php-protocol"},
	{errUnreadableESI, fasthttp.StatusBadGateway, "esi-coding"},
	{errUnknownCoding, fasthttp.StatusBadGateway, "coding"},
	{errDecodedTooLarge, fasthttp.StatusBadGateway, "coding"},
	{errTooManyCodings, fasthttp.StatusBadGateway, "coding"},
}

// reasonRule names one cause of an unavailable origin.
type reasonRule struct {
	err    error
	reason string
}

// unavailableRules name what made an origin unavailable: the refused
// connect of a stopped origin, the reset or close of a connection it
// dropped (a keep-alive race shows as origin-closed).
var unavailableRules = []reasonRule{
	{fasthttp.ErrDialTimeout, "origin-connect-timeout"},
	{syscall.ECONNREFUSED, "origin-refused"},
	{syscall.ECONNRESET, "origin-reset"},
	{syscall.EPIPE, "origin-reset"},
	{fasthttp.ErrConnectionClosed, "origin-closed"},
	{io.ErrUnexpectedEOF, "origin-closed"},
	{io.EOF, "origin-closed"},
}

// failureOf is err's failure, its reason made precise for an unavailable
// origin.
func failureOf(err error) failure {
	for _, f := range failures {
		if errors.Is(err, f.err) {
			if f.reason == "origin-unavailable" {
				f.reason = cmp.Or(firstReason(err, unavailableRules), f.reason)
			}
			return f
		}
	}
	return failure{err: err, status: fasthttp.StatusBadGateway, reason: "other"}
}

// errorReason is the token errorHeader carries for err.
func errorReason(err error) string { return failureOf(err).reason }

func firstReason(err error, rules []reasonRule) string {
	for _, r := range rules {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return ""
}
