package docroot

import (
	"github.com/valyala/fasthttp"
)

// redirect answers 301 to the directory with its trailing slash, keeping
// the query, as nginx does for a directory requested without one.
func redirect(req *fasthttp.Request, resp *fasthttp.Response, location string) {
	if q := req.URI().QueryString(); len(q) > 0 {
		location += "?" + string(q)
	}
	redirectTo(resp, location)
}

// redirectTo answers 301 to location as it is.
func redirectTo(resp *fasthttp.Response, location string) {
	resp.SetStatusCode(fasthttp.StatusMovedPermanently)
	resp.Header.Set("Location", location)
	resp.Header.SetContentType("text/plain; charset=utf-8")
	resp.SetBodyString("Moved Permanently\n")
}

// refuse answers a path nothing may serve.
func refuse(resp *fasthttp.Response, k kind) {
	code := fasthttp.StatusNotFound
	switch k {
	case kindForbidden:
		code = fasthttp.StatusForbidden
	case kindBadPath:
		code = fasthttp.StatusBadRequest
	}
	resp.SetStatusCode(code)
	resp.Header.SetContentType("text/plain; charset=utf-8")
	resp.Header.Set("X-LiteSpeed-Cache-Control", "no-cache")
	resp.SetBodyString(fasthttp.StatusMessage(code) + "\n")
}
