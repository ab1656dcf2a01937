package proxy

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/origin"
)

// ErrBodyRead is returned when the origin's body broke off before it was
// complete and nothing had been sent to the client yet.
var ErrBodyRead = errors.New("proxy: reading origin body")

// ErrMustRevalidate is returned when a stored response that may not be
// served stale (must-revalidate, s-maxage, no-cache) could not be
// revalidated because the origin failed: RFC 9111 5.2.2.2 asks for 504.
var ErrMustRevalidate = errors.New("proxy: the stored response must be revalidated and the origin failed")

// retryAfter is what a client told 503 (every PHP worker or origin
// connection busy, the queue full) waits.
const retryAfter = "1"

// statusClientClosed is nginx's 499: the client went away before its
// answer was ready; nobody reads it, the access log does.
const statusClientClosed = 499

// writeError answers the client with a short body and logs why.
func (p *Proxy) writeError(ctx *fasthttp.RequestCtx, err error) {
	f := failureOf(err)
	code := f.status
	switch code {
	case fasthttp.StatusGatewayTimeout:
		p.metrics.originTimeouts.Inc()
	case fasthttp.StatusBadGateway:
		p.metrics.originErrors.Inc()
	case fasthttp.StatusServiceUnavailable:
		if f.err == origin.ErrBusy {
			p.metrics.originBusy.Inc()
		} else {
			p.metrics.phpBusy.Inc()
		}
	}
	if code == statusClientClosed {
		p.log.Debug("client went away while its request waited for a PHP worker", "host", string(ctx.Host()),
			"uri", string(ctx.RequestURI()))
		ctx.Response.Reset()
		ctx.SetStatusCode(code)
		ctx.SetConnectionClose()
		return
	}
	if code == fasthttp.StatusBadRequest {
		p.log.Debug("request refused", "err", err) // the access log has its 400; a scanner must not flood this one
		rejectEarly(ctx, ctx.RequestBodyStream(), code, "Bad Request\n")
		return
	}
	if code == fasthttp.StatusRequestEntityTooLarge {
		p.log.Info("request body too large", "host", string(ctx.Host()), "uri", string(ctx.RequestURI()))
		rejectEarly(ctx, ctx.RequestBodyStream(), code, "Content Too Large\n")
		return
	}
	reason := f.reason
	p.log.Warn("origin request failed", "status", code, "reason", reason, "method", string(ctx.Method()),
		"host", string(ctx.Host()), "uri", string(ctx.RequestURI()), "err", err)
	ctx.Response.Reset()
	ctx.Response.Header.Set(errorHeader, reason)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetStatusCode(code)
	if code == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.Set("Retry-After", retryAfter)
	}
	ctx.SetBodyString(fasthttp.StatusMessage(code) + "\n")
}
