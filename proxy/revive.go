package proxy

import "github.com/ramjet-proxy/ramjet/proxy/cache"

// Revive rebuilds what the proxy keeps beside an entry the disk tier
// loaded (cache.Entry fields a file does not hold): its ESI parse when it
// had one, its ready head, and its site's tally. It reports false for an
// entry that cannot be served as it was stored.
func (p *Proxy) Revive(key string, e *cache.Entry, doc bool) bool {
	g := p.gen.Load()
	if doc {
		p.parseESI(g, e)
		if e.Doc == nil {
			return false // markup it no longer finds: not what was stored
		}
	}
	if head := storedHead(e); head != nil {
		e.Head = head
	}
	_, host := keyPathOf(key)
	if s := g.router.route([]byte(host)); s != nil && s.state != nil {
		e.Tally = &s.state.tally
	}
	return true
}
