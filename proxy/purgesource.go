package proxy

import (
	"encoding/json"
	"net/netip"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/purge"
)

// Purger takes the purges the proxy finds in origin responses and PURGE
// requests: the hub that applies them here and fans them out. Without
// one the proxy applies them to its own cache only.
type Purger interface {
	Apply(cmd purge.Command, source string) purge.Result
}

// SetPurger routes purges through pg. Call it before serving.
func (p *Proxy) SetPurger(pg Purger) { p.purger = pg }

func (p *Proxy) apply(cmd purge.Command, source string) purge.Result {
	if p.purger != nil {
		return p.purger.Apply(cmd, source)
	}
	return p.Purge(cmd)
}

// Response headers that carry purges. LiteSpeed's plugin sends queued
// purges on later, unrelated responses, so every origin response is read.
var (
	lsPurgeHeaders   = []string{"X-Litespeed-Purge", "X-Litespeed-Purge2"}
	keysPurgeHeaders = []string{"Cache-Group-Invalidation"}
)

// applyResponsePurges runs the purges an origin response asks for,
// before the response itself is stored. They reach entries whose fill
// began before born (the fill that got this response), never the response
// itself. born 0 means now.
func (p *Proxy) applyResponsePurges(h *fasthttp.ResponseHeader, host []byte, born int64, id uint64) {
	for _, name := range lsPurgeHeaders {
		for _, v := range h.PeekAll(name) {
			cmds, err := purge.ParseHeader(v)
			if err != nil {
				p.metrics.badPurgeHeaders.Inc()
				p.log.Debug("malformed purge header; well-formed parts applied", "header", name, "value", string(v), "err", err)
			}
			for _, c := range cmds {
				c.Host, c.Before = string(host), born
				if c.Private {
					c.Identity = strconv.FormatUint(id, 16)
				}
				p.apply(c, "header")
			}
		}
	}
	for _, name := range keysPurgeHeaders {
		for _, v := range h.PeekAll(name) {
			c := purge.ParseKeys(v, false)
			c.Host, c.Before = string(host), born
			p.apply(c, "header")
		}
	}
}

// Request headers a PURGE may carry to name tags instead of its URL
// (LSCache, Souin / Fastly, Varnish xkey).
var purgeRequestHeaders = []string{"Surrogate-Key", "Xkey-Purge", "Cache-Tag"}

// purgeMethod answers PURGE (and REFRESH, a soft purge) for one URL, or
// for the tags named in its headers, from trusted addresses only.
func (p *Proxy) purgeMethod(ctx *fasthttp.RequestCtx, g *generation) {
	if !g.trustedPurger(ctx.RemoteIP()) {
		ctx.Response.Header.Set("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH")
		ctx.Error("Method Not Allowed\n", fasthttp.StatusMethodNotAllowed)
		return
	}
	soft := string(ctx.Method()) == "REFRESH"
	cmd := purge.Command{Host: string(ctx.Host())}
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

// trustedPurger reports whether ip may send PURGE and REFRESH.
func (g *generation) trustedPurger(ip []byte) bool {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	addr = addr.Unmap()
	for _, pfx := range g.cfg.PurgeAllow {
		if pfx.Contains(addr) {
			return true
		}
	}
	return len(g.cfg.PurgeAllow) == 0 && addr.IsLoopback()
}
