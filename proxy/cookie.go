package proxy

import "github.com/valyala/fasthttp"

// Cookies are read through fasthttp's parsed cookie list: after the first
// request on a connection it is reused, so reading it does not allocate,
// whereas re-serialising the Cookie header would.

// hasCookie reports whether any request cookie name matches p.
func hasCookie(h *fasthttp.RequestHeader, p *patterns) bool {
	if len(p.exact) == 0 && len(p.prefixes) == 0 {
		return false
	}
	for name := range h.Cookies() {
		if p.match(name) {
			return true
		}
	}
	return false
}

// cookieValue returns the value of the named request cookie, or nil.
func cookieValue(h *fasthttp.RequestHeader, name string) []byte {
	return h.Cookie(name)
}
