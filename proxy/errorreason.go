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

// reasonRule is one failure errorReason names: the first rule whose
// error err wraps gives the reason.
type reasonRule struct {
	err    error
	reason string
}

// reasonRules go from the most precise to the broadest.
var reasonRules = []reasonRule{
	{ErrMustRevalidate, "must-revalidate"},
	{origin.ErrTimeout, "origin-timeout"},
	{origin.ErrBusy, "origin-busy"},
	{origin.ErrUnavailable, "origin-unavailable"}, // made precise by unavailableRules
	{ErrBodyRead, "origin-body"},
	{phppool.ErrTimeout, "php-timeout"},
	{phppool.ErrBusy, "php-busy"},
	{phppool.ErrWorkerFailed, "php-worker-failed"},
	{phppool.ErrClosed, "php-closed"},
	{phppool.ErrRejected, "php-rejected"},
	{phppool.ErrResponseHead, "php-response-head"},
	{phppool.ErrProtocol, "php-protocol"},
	{errUnreadableESI, "esi-coding"},
	{errUnknownCoding, "coding"},
	{errDecodedTooLarge, "coding"},
	{errTooManyCodings, "coding"},
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

// errorReason is the token errorHeader carries for err: a constant
// string, "other" for a failure no rule names.
func errorReason(err error) string {
	reason := firstReason(err, reasonRules)
	if reason == "origin-unavailable" {
		reason = cmp.Or(firstReason(err, unavailableRules), reason)
	}
	return cmp.Or(reason, "other")
}

func firstReason(err error, rules []reasonRule) string {
	for _, r := range rules {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return ""
}
