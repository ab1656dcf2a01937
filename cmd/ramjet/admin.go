package main

import (
	"crypto/subtle"
	"encoding/json"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/purge"
)

// adminHandler serves the admin listener: /healthz for load balancers and
// supervisors (it reports the Redis fan-out without failing the node),
// /metrics in the Prometheus text format (behind the token when one is
// set), and POST /purge.
func (d *daemon) adminHandler() fasthttp.RequestHandler {
	token := d.cfg.Admin.Token
	api := purge.NewAPI(purge.APIConfig{Token: token, Allow: prefixes(d.cfg.Purge.AdminAllow)}, d.hub)
	return func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/healthz":
			d.health(ctx)
		case "/metrics":
			if !authorized(ctx, token) {
				ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="ramjet"`)
				ctx.Error("unauthorized\n", fasthttp.StatusUnauthorized)
				return
			}
			ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
			d.proxy.Metrics().WritePrometheus(ctx)
		case "/purge":
			api.ServePurge(ctx)
		default:
			ctx.Error("not found\n", fasthttp.StatusNotFound)
		}
	}
}

// health answers 200 while the node serves; the fan-out state is
// information (a node without Redis still serves its own cache).
func (d *daemon) health(ctx *fasthttp.RequestCtx) {
	state := "off"
	if d.fan != nil {
		state = d.fan.State()
	}
	body, err := json.Marshal(map[string]string{"status": "ok", "redis": state})
	if err != nil {
		ctx.Error("status encoding failed\n", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(append(body, '\n'))
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
