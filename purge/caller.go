package purge

import "github.com/valyala/fasthttp"

// Caller identifies the caller of another admin endpoint that site tokens
// may use (the sites' stats) as ServePurge does: from an allowed network,
// with the operator's token (site "": every site) or a site's (that
// site). It answers 403 or 401 itself and reports false when it refuses.
func (a *API) Caller(ctx *fasthttp.RequestCtx) (site string, ok bool) {
	if !a.allowed(ctx) {
		writeError(ctx, fasthttp.StatusForbidden, "forbidden")
		return "", false
	}
	site, ok = a.authorized(ctx)
	if !ok {
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="ramjet"`)
		writeError(ctx, fasthttp.StatusUnauthorized, "unauthorized")
	}
	return site, ok
}
