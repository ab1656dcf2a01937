package proxy

import (
	"net"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
)

// stageClient settles who is asking, once, before anything trusts an
// address: the connection's peer (the client a PROXY header named, when
// the listener takes them), or, when that peer is a trusted proxy
// (Config.RealIP), the client its forwarding header names. The stages
// after it, the access log and the origin's X-Forwarded-For take the
// address from r.remoteIP; ctx.RemoteAddr reports it too, for whatever
// asks fasthttp. A fragment has its page's client already (it does not
// run this stage).
//
// On a behind_tls listener the peer is the TLS terminator: when neither a
// PROXY header nor a trusted header named the client, the address is
// the terminator's, which is nobody's to trust (r.terminator).
func stageClient(r *request) verdict {
	peer := peerOf(r.ctx.Conn())
	rc := &r.g.cfg.RealIP
	if len(rc.From) == 0 {
		r.setClient(peer.Addr(), peer.Port())
		r.claimed = -1
		r.terminator = r.via.FromTerminator()
		return proceed
	}
	name := rc.HeaderName()
	cl := rc.Resolve(peer.Addr(), r.header().PeekAll(name))
	if !cl.Named {
		r.setClient(peer.Addr(), peer.Port())
		r.terminator = r.via.FromTerminator()
	} else {
		r.setClient(cl.Addr, 0)
		r.ctx.SetRemoteAddr(&r.addr)
		r.remoteSet = true
	}
	r.claimed = cl.Claimed
	if !strings.EqualFold(name, fasthttp.HeaderXForwardedFor) {
		r.claimed = -1 // X-Forwarded-For is not what named the client: it goes on whole
	}
	return proceed
}

// peerOf is c's remote address and port, from the connection's own record
// when it keeps one (conns.Conn, read at accept: RemoteAddr's way brings
// three more of the connection's objects into the CPU's cache per request).
func peerOf(c net.Conn) netip.AddrPort {
	if p, ok := c.(peerAddresser); ok {
		return p.PeerAddrPort()
	}
	return addrPort(c.RemoteAddr())
}

type peerAddresser interface{ PeerAddrPort() netip.AddrPort }

var _ peerAddresser = (*conns.Conn)(nil)

// addrPort is a's address and port (TCP, or UDP for HTTP/3); invalid
// for any other kind of address.
func addrPort(a net.Addr) netip.AddrPort {
	switch t := a.(type) {
	case *net.TCPAddr:
		return t.AddrPort()
	case *net.UDPAddr:
		return t.AddrPort()
	}
	return netip.AddrPort{}
}

// RealClient makes ctx's remote address the client its forwarding
// header names when the connection's peer is a trusted proxy of the
// current generation (Config.RealIP), as stageClient does for the
// proxy's own requests; otherwise it is the connection's. The admin
// listener's handler calls it, so that purge.admin_allow judges the
// address PURGE trust does. It allocates: the admin listener is no hot
// path.
func (p *Proxy) RealClient(ctx *fasthttp.RequestCtx) {
	ctx.SetRemoteAddr(nil) // set per request, never left from the connection's last one
	rc := &p.gen.Load().cfg.RealIP
	if len(rc.From) == 0 {
		return
	}
	peer := addrPort(ctx.Conn().RemoteAddr())
	if cl := rc.Resolve(peer.Addr(), ctx.Request.Header.PeekAll(rc.HeaderName())); cl.Named {
		ctx.SetRemoteAddr(net.TCPAddrFromAddrPort(netip.AddrPortFrom(cl.Addr, 0)))
	}
}

// clientPart is who asks (stageClient; a fragment: its page's client).
// client is the single source of the client's address; ip16 and addr
// spell it for net.IP and net.Addr users without allocating. port is 0
// when unknown (a client a trusted proxy named).
type clientPart struct {
	client netip.Addr
	port   uint16
	ip16   [16]byte
	addr   net.TCPAddr
	// claimed: how many X-Forwarded-For hops, from the left, go on to
	// the origin before the client (-1: all of them).
	claimed int
	// terminator: the address is a behind_tls listener's peer, the TLS
	// terminator, as nothing named its client: it is trusted for nothing.
	terminator bool
	// remoteSet: ctx.SetRemoteAddr(&addr) was called, undone by release.
	remoteSet bool
}

func (c *clientPart) reset() {
	c.client, c.port, c.ip16, c.claimed, c.terminator, c.remoteSet = netip.Addr{}, 0, [16]byte{}, 0, false, false
	c.addr.IP, c.addr.Port, c.addr.Zone = nil, 0, ""
}

// remoteIP is the client's address (a fragment's: its page's client),
// valid until release: what PURGE trust, the private identity, the
// origin's X-Forwarded-For and the access log take. It is a trusted
// proxy's client, never the proxy.
func (c *clientPart) remoteIP() net.IP { return net.IP(c.ip16[:]) }

// setClient makes a (with its port, 0 when unknown) the request's client.
func (c *clientPart) setClient(a netip.Addr, port uint16) {
	if !a.IsValid() {
		a = netip.IPv4Unspecified() // not TCP: as fasthttp's RemoteIP says
	}
	c.client, c.port, c.ip16 = a.Unmap(), port, a.As16()
	c.addr = net.TCPAddr{IP: c.ip16[:], Port: int(port)}
}
