package main

import (
	"crypto/subtle"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy"
)

// adminHandler serves the admin listener: /healthz for load balancers and
// supervisors, /metrics in the Prometheus text format (behind the token
// when one is set).
func adminHandler(m *proxy.Metrics, token string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/healthz":
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBodyString("ok\n")
		case "/metrics":
			if !authorized(ctx, token) {
				ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="ramjet"`)
				ctx.Error("unauthorized\n", fasthttp.StatusUnauthorized)
				return
			}
			ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
			m.WritePrometheus(ctx)
		default:
			ctx.Error("not found\n", fasthttp.StatusNotFound)
		}
	}
}

// authorized checks "Authorization: Bearer TOKEN" in constant time; no
// token configured means the listener is loopback-only and open.
func authorized(ctx *fasthttp.RequestCtx, token string) bool {
	if token == "" {
		return true
	}
	got := ctx.Request.Header.Peek("Authorization")
	want := "Bearer " + token
	return subtle.ConstantTimeCompare(got, []byte(want)) == 1
}
