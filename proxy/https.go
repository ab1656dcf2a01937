package proxy

import (
	"bytes"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// The HTTPS steps of the request path: plain requests for a site that
// wants HTTPS are redirected before anything else, and responses sent
// over TLS get the site's Strict-Transport-Security header.

var (
	hdrLocation   = []byte("Location")
	hdrHSTS       = []byte("Strict-Transport-Security")
	hdrAltSvc     = []byte("Alt-Svc")
	csRedirect    = []byte("ramjet; detail=https-redirect")
	acmeChallenge = []byte("/.well-known/acme-challenge/")
)

// needsHTTPS reports whether a plain request for a site with
// HTTPSRedirect must be redirected. ACME http-01 challenges are left
// alone: a certificate must be obtainable before HTTPS works.
func needsHTTPS(ctx *fasthttp.RequestCtx, s *site) bool {
	return s.HTTPSRedirect && !ctx.IsTLS() && len(stripPort(ctx.Host())) > 0 &&
		!bytes.HasPrefix(pathOf(&ctx.Request), acmeChallenge)
}

// redirectToHTTPS answers with the same URL over HTTPS (301, or 308 to
// keep a method other than GET and HEAD).
func redirectToHTTPS(ctx *fasthttp.RequestCtx, g *generation) {
	host := stripPort(ctx.Host())
	uri := ctx.Request.Header.RequestURI()
	loc := make([]byte, 0, len("https://")+len(host)+6+len(uri))
	loc = append(append(loc, "https://"...), host...)
	if port := g.cfg.HTTPSPort; port != 0 && port != 443 {
		loc = strconv.AppendInt(append(loc, ':'), int64(port), 10)
	}
	loc = append(loc, uri...)
	code := fasthttp.StatusMovedPermanently
	if !ctx.IsGet() && !ctx.IsHead() {
		code = fasthttp.StatusPermanentRedirect
	}
	ctx.Response.SetStatusCode(code)
	ctx.Response.Header.SetCanonical(hdrLocation, loc)
	ctx.Response.Header.SetCanonical(hdrCacheStatus, csRedirect)
}

// addAltSvc advertises HTTP/3 on a response sent over ramjet's own TLS
// listener (not behind a terminator, whose port and protocols are its
// own), unless the application sent its own Alt-Svc.
func addAltSvc(ctx *fasthttp.RequestCtx, s *site) {
	if len(s.altSvc) == 0 || !ctx.IsTLS() || streamctx.TransportOf(ctx).BehindTLS() {
		return
	}
	if h := &ctx.Response.Header; len(h.PeekBytes(hdrAltSvc)) == 0 {
		h.SetCanonical(hdrAltSvc, s.altSvc)
	}
}

// addHSTS adds the site's Strict-Transport-Security value to a response
// sent over TLS, unless the application sent its own. It allocates
// nothing: the value is kept as bytes in the compiled site.
func addHSTS(ctx *fasthttp.RequestCtx, s *site) {
	if len(s.hsts) == 0 || !ctx.IsTLS() {
		return
	}
	if h := &ctx.Response.Header; len(h.PeekBytes(hdrHSTS)) == 0 {
		h.SetCanonical(hdrHSTS, s.hsts)
	}
}
