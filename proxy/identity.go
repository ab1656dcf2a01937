package proxy

import (
	"hash/maphash"
	"net"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// stageIdentity decides whether the request goes through the cache at
// all: other methods than GET and HEAD, caching off for the site, bypass
// cookies and a GET or HEAD with a body pass uncached. Credentials do
// not: a response to a
// request with Authorization is stored only when it says it may be shared
// (public, s-maxage, must-revalidate; RFC 9111 3.5), and the private
// identity includes them. Fragments are never
// passed: their page decided (a logged-in user's page still takes its
// public fragments from the cache, which is what ESI is for). The private
// identity is computed when a stage first needs it (r.identity).
func stageIdentity(r *request) verdict {
	switch pass, n := r.access(); {
	case pass != nil:
		r.pass = pass
		r.tally(n, outPass)
	case r.refusedToDocroot():
		r.pass = csHtaccess
	}
	return proceed
}

// stageIdentityInline declines what stageIdentity would pass.
func stageIdentityInline(r *request) verdict {
	if pass, _ := r.access(); pass != nil {
		return declined
	}
	return proceed
}

// stageIdentityFragment notes the fragment's credentials: its page's,
// on the page's host. Its page decided whether the cache is used.
func stageIdentityFragment(r *request) verdict {
	r.authorized = r.fragAuthorized || len(peekCanonical(r.header(), "Authorization")) > 0
	return proceed
}

// access notes whether the request carries credentials and says whether
// it passes uncached: the Cache-Status it then gets and its counter; nil
// goes through the cache.
func (r *request) access() ([]byte, *metrics.Counter) {
	h := r.header()
	r.authorized = len(peekCanonical(h, "Authorization")) > 0
	switch {
	case !h.IsGet() && !h.IsHead():
		return csMethod, r.c.method
	case r.bypassed():
		return csBypass, r.c.bypass
	case hasBody(h):
		return csBody, r.c.bypass
	}
	return nil, nil
}

// hasBody reports a request that comes with content: a length above 0,
// or -1, chunked (HTTP/1.1) or DATA of no declared length (HTTP/2; over
// HTTP/3 such a GET has none, h3's setBody). A GET or HEAD with a body
// is passed, as nginx forwards it: its own request upstream with its
// body, never coalesced (nobody else waits on a client's upload) nor
// stored (its answer may depend on the body the key does not hold).
// Varnish drops the body and caches; that would have the application
// answer a request the client did not send.
func hasBody(h *fasthttp.RequestHeader) bool {
	n := h.ContentLength()
	return n > 0 || n == -1
}

// bypassed reports whether the request must skip the cache both ways:
// caching off for the site, a bypass cookie, or the site's LiteSpeed
// cache rules saying no-cache.
func (r *request) bypassed() bool {
	if lc := r.lsCache(); lc != nil && lc.NoCache {
		return true
	}
	return !r.s.Cache || hasCookie(r.header(), r.s.bypass)
}

// The private cache keeps per-user copies, as LSCache's does: a user is
// their session cookies (anonymousCookie's are left out), their
// credentials and their address. A client with no session has no identity
// and gets no private caching, so two anonymous visitors behind one
// address can never share a private entry.

// identity is the private-cache identity of a client at ip sending h, 0
// when it has none; site names the site's own anonymous cookies (nil:
// none). Cookie order does not matter. It does not allocate.
func (p *Proxy) identity(h *fasthttp.RequestHeader, ip net.IP, site *patterns) uint64 {
	var id uint64
	var mh maphash.Hash
	mh.SetSeed(p.idSeed)
	for name, value := range h.Cookies() {
		if len(value) == 0 || anonymousCookie(name) || site.match(name) {
			continue
		}
		mh.Reset()
		mh.Write(name)
		mh.WriteByte('=')
		mh.Write(value)
		id ^= mh.Sum64()
	}
	if auth := peekCanonical(h, "Authorization"); len(auth) > 0 {
		mh.Reset()
		mh.WriteString("authorization:")
		mh.Write(auth)
		id ^= mh.Sum64()
	}
	if id == 0 {
		return 0
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4 // one address, however the listener spells it
	}
	mh.Reset()
	mh.Write(ip)
	return id ^ mh.Sum64() | 1 // never 0 once there is a session
}

// accessPart is what stageIdentity decided: whether the request goes
// through the cache, its credentials, and the private identity.
type accessPart struct {
	// pass is the Cache-Status of a request forwarded uncached (a method
	// the cache does not answer, a bypass, what the .htaccess rules
	// refused on a docroot site); nil goes through the cache.
	pass []byte
	// authorized: the request carries Authorization; only shared entries
	// answer it (RFC 9111 3.5).
	authorized bool
	// fragAuthorized: a fragment whose page's request (whose headers it
	// shares) carries Authorization.
	fragAuthorized bool
	// id is the private-cache identity (0: none), computed on first use.
	id     uint64
	idDone bool
}

func (a *accessPart) reset() {
	a.pass, a.authorized, a.fragAuthorized, a.id, a.idDone = nil, false, false, 0, false
}

// identity is the client's private-cache identity, 0 when it has none.
func (r *request) identity() uint64 {
	if !r.idDone {
		var site *patterns
		if r.s != nil {
			site = r.s.anonymous
		}
		r.id, r.idDone = r.p.identity(r.header(), r.remoteIP(), site), true
	}
	return r.id
}
