package main

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"os"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/proxy"
	"github.com/ramjet-proxy/ramjet/purge"
)

// adminHandler serves the admin listener: /healthz for load balancers and
// supervisors (it reports the Redis fan-out without failing the node),
// /metrics in the Prometheus text format (behind the token when one is
// set), POST /purge, GET /stats (a site's numbers; sitestats.go) and
// POST /reopen-logs (ramjet reopen-logs).
func (d *daemon) adminHandler() fasthttp.RequestHandler {
	token := d.cfg.Admin.Token
	guard := purge.NewHostGuard(d.cfg.Admin.Names)
	return func(ctx *fasthttp.RequestCtx) {
		d.proxy.RealClient(ctx) // admin_allow judges the client a trusted proxy names
		if !guard.Check(ctx) {  // a browser's request on a page's behalf
			return
		}
		switch string(ctx.Path()) {
		case "/healthz":
			d.health(ctx)
		case "/metrics":
			if !requireToken(ctx, token) {
				return
			}
			ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
			d.proxy.Metrics().WritePrometheus(ctx)
		case "/purge":
			d.api.Load().ServePurge(ctx)
		case "/stats":
			d.serveSiteStats(ctx) // a site's token reads its own
		case "/reopen-logs":
			if !requireToken(ctx, token) {
				return
			}
			d.serveReopenLogs(ctx)
		case "/php/status":
			if !requireToken(ctx, token) {
				return
			}
			d.phpStatus(ctx)
		default:
			ctx.Error("not found\n", fasthttp.StatusNotFound)
		}
	}
}

// newAPI builds the purge API for cfg: the operator's token (fixed at
// start, like the admin listener) and the sites' own tokens, which a
// reload replaces.
func (d *daemon) newAPI(cfg *conf.Config) (*purge.API, error) {
	tokens, err := d.purgeTokens(cfg)
	if err != nil {
		return nil, err
	}
	return purge.NewAPI(purge.APIConfig{Token: tokens.Operator, Allow: prefixes(d.cfg.Purge.AdminAllow),
		Sites: tokens.Sites, ScopeOf: d.proxy.ScopeOf}, d.hub), nil
}

// purgeTokens are the tokens that purge, in the admin API and in PURGE
// requests: the operator's (fixed at start, like the admin listener) and
// cfg's sites' own (token files read now).
func (d *daemon) purgeTokens(cfg *conf.Config) (purge.Tokens, error) {
	t := purge.Tokens{Operator: d.cfg.Admin.Token}
	for i := range cfg.Hosts {
		tok, err := cfg.Hosts[i].SiteToken()
		if err != nil {
			return t, fmt.Errorf("hosts[%d]: %w", i, err)
		}
		if tok != "" {
			t.Sites = append(t.Sites, purge.SiteToken{Token: tok, Site: proxy.SiteScope(cfg.Hosts[i].Names)})
		}
	}
	return t, nil
}

// serveReopenLogs reopens the access log files and says whether every
// one could be: 200, or 500 with the errors (the files that failed keep
// writing to the old ones).
func (d *daemon) serveReopenLogs(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		ctx.Error("POST only\n", fasthttp.StatusMethodNotAllowed)
		ctx.Response.Header.Set("Allow", "POST")
		return
	}
	if err := d.reopenLogs("admin API"); err != nil {
		ctx.Error(err.Error()+"\n", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString("access logs reopened\n")
}

// health answers 200 while the node serves; the fan-out state is
// information (a node without Redis still serves its own cache).
func (d *daemon) health(ctx *fasthttp.RequestCtx) {
	state := "off"
	if d.fan != nil {
		state = d.fan.State()
	}
	// The pid tells which process answers on the admin address: during
	// an upgrade, or for a supervisor that started one and finds another.
	body, err := json.Marshal(map[string]any{"status": "ok", "redis": state, "pid": os.Getpid()})
	if err != nil {
		ctx.Error("status encoding failed\n", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(append(body, '\n'))
}

// phpStatus lists the PHP pools and their workers as JSON.
func (d *daemon) phpStatus(ctx *fasthttp.RequestCtx) {
	body, err := json.MarshalIndent(map[string]any{"pools": poolsJSON(d.proxy.PHPStatus())}, "", "  ")
	if err != nil {
		ctx.Error("status encoding failed\n", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(append(body, '\n'))
}

type workerJSON struct {
	PID        int     `json:"pid"`
	State      string  `json:"state"`
	Requests   int     `json:"requests"`
	AgeSeconds float64 `json:"age_seconds"`
	RSSBytes   int64   `json:"rss_bytes"`
	PSSBytes   int64   `json:"pss_bytes"`
}

type poolJSON struct {
	Name    string       `json:"name"`
	Workers []workerJSON `json:"workers"`
	// The shared engine's master (0: none) and its children no worker
	// holds; PSSBytes sums every process of the pool, master included.
	MasterPID int               `json:"master_pid"`
	Spares    []int             `json:"spares"`
	PSSBytes  int64             `json:"pss_bytes"`
	Queued    int               `json:"queued"` // requests waiting for a worker now
	Counts    map[string]uint64 `json:"counts"`
	// Resume latency (SIGCONT to first output) percentiles, in ms.
	ResumeP50ms float64 `json:"resume_p50_ms"`
	ResumeP99ms float64 `json:"resume_p99_ms"`
}

func poolsJSON(pools []proxy.PoolStatus) []poolJSON {
	out := make([]poolJSON, 0, len(pools))
	for _, p := range pools {
		s := p.Stats
		pj := poolJSON{Name: p.Name, Workers: []workerJSON{}, Counts: map[string]uint64{
			"requests": s.Requests, "spawns": s.Spawns, "crashes": s.Crashes, "timeouts": s.Timeouts,
			"recycled": s.Recycled, "busy": s.Busy, "retries": s.Retries, "resumes": s.Resumes, "client_gone": s.ClientGone,
		}}
		pj.ResumeP50ms = float64(s.ResumeLatency.Quantile(0.5).Microseconds()) / 1000
		pj.ResumeP99ms = float64(s.ResumeLatency.Quantile(0.99).Microseconds()) / 1000
		pj.MasterPID, pj.Spares, pj.PSSBytes, pj.Queued = p.Master.PID, append([]int{}, p.Master.Spares...), p.Master.PSS, p.Queued
		for _, w := range p.Workers {
			pj.Workers = append(pj.Workers, workerJSON{PID: w.PID, State: w.State, Requests: w.Requests,
				AgeSeconds: w.Age.Seconds(), RSSBytes: w.RSS, PSSBytes: w.PSS})
			pj.PSSBytes += w.PSS
		}
		out = append(out, pj)
	}
	return out
}

// requireToken answers 401 unless the request carries the token.
func requireToken(ctx *fasthttp.RequestCtx, token string) bool {
	if authorized(ctx, token) {
		return true
	}
	ctx.Error("unauthorized\n", fasthttp.StatusUnauthorized) // resets the header: the challenge comes after
	ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="ramjet"`)
	return false
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
