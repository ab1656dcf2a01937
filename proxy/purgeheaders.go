package proxy

import (
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

// responsePurge is where the purges a response carries apply: the
// answering host and its site's scope (never wider: a site purges only
// its own pages), entries whose fill began before born (0: now), and the
// client whose private entries "private, …" means.
type responsePurge struct {
	host  []byte
	scope string
	born  int64
	id    uint64
}

// applyResponsePurges runs the purges an origin response asks for,
// before the response itself is stored. They reach entries whose fill
// began before born (the fill that got this response), never the response
// itself.
func (p *Proxy) applyResponsePurges(h *fasthttp.ResponseHeader, at responsePurge) {
	host, born, id := at.host, at.born, at.id
	for _, name := range lsPurgeHeaders {
		for _, v := range h.PeekAll(name) {
			cmds, err := purge.ParseHeader(v)
			if err != nil {
				p.metrics.badPurgeHeaders.Inc()
				p.log.Debug("malformed purge header; well-formed parts applied", "header", name, "value", string(v), "err", err)
			}
			for _, c := range cmds {
				c.Host, c.Before, c.Site = string(host), born, at.scope
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
			c.Host, c.Before, c.Site = string(host), born, at.scope
			p.apply(c, "header")
		}
	}
}
