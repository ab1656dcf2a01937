package proxy

import (
	"net/netip"
	"net/textproto"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/docroot"
	"github.com/ramjet-proxy/ramjet/proxy/realip"
)

// forwarding is what the upstream is told about the client of a request
// (a page's; a fragment's is its page's).
type forwarding struct {
	client  netip.Addr
	claimed int // X-Forwarded-For hops that go on before the client (request.claimed)
	tls     bool
	// trusted: the connection's peer is a terminator the config names
	// (a behind_tls listener's, or one in real_ip.from); what it says in
	// terminatorFields goes on, anyone else's is removed.
	trusted bool
	// realIPHeader is real_ip.header when it is not X-Forwarded-For: a
	// header ramjet believes from trusted peers only, so the origin gets
	// it from them only.
	realIPHeader string
}

// terminatorFields say who the client is or how it came (scheme, port,
// path prefix). Applications behind a proxy they trust (Symfony's and
// Laravel's trusted proxies, Rack, WordPress snippets) believe them and
// build URLs from them: from anyone but a trusted terminator they are a
// client's forgery, and go nowhere. Forwarded (RFC 7239) among them:
// ramjet names the client in X-Forwarded-For, and does not append to a
// Forwarded it could not vouch for.
var terminatorFields = canonical("Forwarded", "X-Real-IP", "X-Forwarded-Port", "X-Forwarded-Prefix",
	"X-Forwarded-Ssl", "X-Forwarded-Scheme", "Front-End-Https")

// ramjetFields are ramjet's word to its docroot (setConnection): a
// client's go nowhere, neither to PHP nor to a proxied origin.
var ramjetFields = []string{docroot.HeaderRemotePort, docroot.HeaderServerAddr}

// canonical is names as fasthttp stores them ("X-Real-Ip").
func canonical(names ...string) []string {
	for i, n := range names {
		names[i] = textproto.CanonicalMIMEHeaderKey(n)
	}
	return names
}

var (
	hdrForwardedProto = textproto.CanonicalMIMEHeaderKey("X-Forwarded-Proto")
	hdrForwardedHost  = textproto.CanonicalMIMEHeaderKey("X-Forwarded-Host")
	hdrLSCache        = textproto.CanonicalMIMEHeaderKey("X-LSCACHE")
	hdrCapability     = textproto.CanonicalMIMEHeaderKey("Surrogate-Capability")
)

// setForwarding gives h, a copy of the client's request header on its
// way upstream, the forwarding fields ramjet sets: X-Forwarded-For (the
// client after the hops nobody vouched for), X-Forwarded-Proto and -Host
// (the scheme the cache key has, and host), each the only line of its
// name; it removes ramjetFields, and terminatorFields unless a trusted
// terminator sent them.
func setForwarding(h *fasthttp.RequestHeader, f *forwarding, host []byte) {
	setForwardedFor(h, f.claimed, f.client)
	replaceField(h, hdrForwardedProto, schemeOf(f.tls))
	replaceField(h, hdrForwardedHost, host)
	for _, name := range ramjetFields {
		removeField(h, name)
	}
	if f.trusted {
		return
	}
	for _, name := range terminatorFields {
		removeField(h, name)
	}
	if f.realIPHeader != "" {
		h.Del(f.realIPHeader) // a configured name: normalised by Del
	}
}

// setForwarded tells the origin who asked, and how (setForwarding):
// X-Forwarded-For is the client's address (r.remoteIP, never a trusted
// proxy's) after the hops nobody vouched for, X-Forwarded-Proto and -Host
// the scheme and host the client used.
func (r *request) setForwarded(h *fasthttp.RequestHeader) {
	f := r.forwarding()
	setForwarding(h, &f, r.ctx.Host())
}

// setForwardedFor replaces every X-Forwarded-For line of h with the one
// the origin gets (appendForwardedFor).
func setForwardedFor(h *fasthttp.RequestHeader, claimed int, client netip.Addr) {
	replaceField(h, fasthttp.HeaderXForwardedFor, appendForwardedFor(nil, h, claimed, client))
}

// appendForwardedFor appends to dst the X-Forwarded-For the origin gets
// for client, from the one in h (the client's request's). What
// the trusted proxies added is theirs and stays out: the origin sees what
// it would if the client had come to ramjet directly — the hops the
// client sent (kept, as nginx's $proxy_add_x_forwarded_for keeps them,
// for applications that log the chain; never believed, here or by an
// origin that takes the last hop), then the client. So an origin
// trusting ramjet alone (set_real_ip_from 127.0.0.1, not recursive)
// logs the real client, and nothing a client wrote can pass for it.
func appendForwardedFor(dst []byte, h *fasthttp.RequestHeader, claimed int, client netip.Addr) []byte {
	n := len(dst)
	dst = realip.AppendClaimed(dst, h.PeekAll(fasthttp.HeaderXForwardedFor), claimed)
	if len(dst) > n {
		dst = append(dst, ", "...)
	}
	return client.AppendTo(dst)
}

// forwarding is what r's upstream requests are told about its client.
func (r *request) forwarding() forwarding {
	f := forwarding{client: r.client, claimed: r.claimed, tls: r.tls, trusted: r.trustedPeer()}
	if name := r.g.cfg.RealIP.HeaderName(); !f.trusted && !strings.EqualFold(name, fasthttp.HeaderXForwardedFor) {
		f.realIPHeader = name
	}
	return f
}

// trustedPeer reports whether r's connection comes from a terminator the
// config names: a behind_tls listener's peer, or one in real_ip.from
// (the address the connection came from, which a PROXY header may have
// named).
func (r *request) trustedPeer() bool {
	if r.via.BehindTLS() {
		return true
	}
	rc := &r.g.cfg.RealIP
	return len(rc.From) > 0 && rc.Trusts(peerOf(r.ctx.Conn()).Addr())
}

// replaceField makes v the only line of the field name (canonical) in h.
// fasthttp's Set replaces the first line only: a client's second line
// would reach the origin, and PHP behind nginx reads the last one. Del
// removes every line but reorders the fields after them, so it runs only
// when there are several.
func replaceField(h *fasthttp.RequestHeader, name string, v []byte) {
	h.DisableNormalizing()
	if len(h.PeekAll(name)) > 1 {
		h.Del(name)
	}
	h.SetBytesV(name, v)
	h.EnableNormalizing()
}

// removeField removes every line of the field name (canonical) from h,
// looking first: usually there is none (as stripHopByHop).
func removeField(h *fasthttp.RequestHeader, name string) {
	h.DisableNormalizing()
	if len(h.PeekAll(name)) > 0 {
		h.Del(name)
	}
	h.EnableNormalizing()
}
