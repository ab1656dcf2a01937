package proxy

import (
	"encoding/json"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/purge"
)

// Request headers a PURGE may carry to name tags instead of its URL
// (LSCache, Souin / Fastly, Varnish xkey).
var purgeRequestHeaders = []string{"Surrogate-Key", "Xkey-Purge", "Cache-Tag"}

// stagePurge answers PURGE (and REFRESH, a soft purge) for one URL, or
// for the tags named in its headers, from trusted addresses only: the
// client's (stageClient), never a trusted proxy's or a TLS terminator's.
func stagePurge(r *request) verdict {
	if r.ctx == nil || !isPurgeMethod(r.header().Method()) {
		return proceed
	}
	if r.inline {
		return declined
	}
	r.p.purgeMethod(r.ctx, !r.terminator && r.g.trustedPurger(r.client), scopeOf(r.s, r.ctx.Host()))
	r.res.written = true
	return answered
}

func isPurgeMethod(m []byte) bool { return string(m) == "PURGE" || string(m) == "REFRESH" }

// purgeMethod answers a PURGE or REFRESH; a trusted one purges in scope,
// the site that answers its Host.
func (p *Proxy) purgeMethod(ctx *fasthttp.RequestCtx, trusted bool, scope string) {
	if !trusted {
		ctx.Response.Header.Set("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH")
		ctx.Error("Method Not Allowed\n", fasthttp.StatusMethodNotAllowed)
		return
	}
	soft := string(ctx.Method()) == "REFRESH"
	cmd := purge.Command{Host: string(ctx.Host()), Site: scope}
	for _, name := range purgeRequestHeaders {
		if v := ctx.Request.Header.Peek(name); len(v) > 0 {
			cmd.Targets = append(cmd.Targets, purge.ParseKeys(v, soft).Targets...)
		}
	}
	if v := ctx.Request.Header.Peek("X-Litespeed-Purge"); len(v) > 0 {
		cmds, _ := purge.ParseHeader(v) // malformed parts are dropped; the rest applies
		for _, c := range cmds {
			if !c.Private {
				cmd.Targets = append(cmd.Targets, c.Targets...)
			}
		}
	}
	if len(cmd.Targets) == 0 {
		cmd.Targets = []purge.Target{{Kind: purge.KindURL, Value: string(ctx.Request.Header.RequestURI()), Soft: soft}}
	}
	res := p.apply(cmd, "method")
	body, err := json.Marshal(map[string]any{"purged": res, "soft": soft})
	if err != nil {
		p.writeError(ctx, err)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(append(body, '\n'))
}

// trustedPurger reports whether a client at addr may send PURGE and
// REFRESH.
func (g *generation) trustedPurger(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, pfx := range g.cfg.PurgeAllow {
		if pfx.Contains(addr) {
			return true
		}
	}
	return len(g.cfg.PurgeAllow) == 0 && addr.IsLoopback()
}
