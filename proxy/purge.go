package proxy

import (
	"encoding/json"
	"errors"
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
// A trusted address is not enough for a site with a token of its own, or
// for every site: every tenant's PHP runs on loopback. Only a page runs
// it: a fragment is a GET, an inline request's admit declined the method.
func stagePurge(r *request) verdict {
	if !isPurgeMethod(r.header().Method()) {
		return proceed
	}
	scope := scopeOf(r.s, r.ctx.Host())
	switch {
	case r.terminator || !r.g.trustedPurger(r.client):
		refusePurgeMethod(r.ctx)
	default:
		err := r.g.cfg.PurgeTokens.MayPurge(r.ctx.Request.Header.Peek(fasthttp.HeaderAuthorization), scope)
		if err != nil {
			refusePurger(r.ctx, err)
			break
		}
		r.p.purgeMethod(r.ctx, scope)
	}
	r.res.written = true
	return answered
}

func isPurgeMethod(m []byte) bool { return string(m) == "PURGE" || string(m) == "REFRESH" }

// refusePurgeMethod answers an untrusted client as a server without
// the method would.
func refusePurgeMethod(ctx *fasthttp.RequestCtx) {
	ctx.Error("Method Not Allowed\n", fasthttp.StatusMethodNotAllowed) // resets the header: Allow comes after
	ctx.Response.Header.Set("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH")
}

// refusePurger answers a trusted client whose credentials do not reach
// the site: 401 without the needed token, 403 with another site's.
func refusePurger(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, purge.ErrOtherSite) {
		ctx.Error("Forbidden: the token is another site's\n", fasthttp.StatusForbidden)
		return
	}
	ctx.Error("Unauthorized: this site's purge token is needed (Authorization: Bearer TOKEN)\n", fasthttp.StatusUnauthorized)
	ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="ramjet"`)
}

// purgeMethod applies a permitted PURGE or REFRESH in scope, the site
// that answers its Host.
func (p *Proxy) purgeMethod(ctx *fasthttp.RequestCtx, scope string) {
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
