package proxy

import (
	"errors"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
)

// HeaderVaryValue carries the LiteSpeed cache rules' vary value
// ("ismobile") to the application, as LiteSpeed passes it to a proxied
// origin; a client's own is removed. It is also what the cache varies
// on for a site with .htaccess rules (varySpec).
const HeaderVaryValue = "X-Lscache-Vary-Value"

// varyValueKey is HeaderVaryValue as a vary spec names it.
const varyValueKey = "x-lscache-vary-value"

// csHtaccess is the Cache-Status of a request the site's .htaccess
// refuses or redirects: passed to the docroot, which answers it.
var csHtaccess = []byte("ramjet; fwd=bypass; detail=htaccess")

var errRefused = errors.New("proxy: refused by the site's .htaccess rules")

// stageRewrite applies the site's .htaccess files before the cache is
// consulted: in docroot mode all of them (what they refuse, redirect or
// protect is passed uncached to the docroot, which answers it with the
// site's error documents, so a stored page is never served past a
// password), in proxy mode (htaccess_root) the LiteSpeed cache rules.
// What those rules say drives the cache for this request: bypass
// (E=Cache-Control:no-cache), the named variant (vary=ismobile) that
// keys it and reaches the application, dropped query parameters; the
// fill reads the rest (default TTL, vary cookies).
func stageRewrite(r *request) verdict {
	t := r.s.ht
	if t == nil {
		return proceed
	}
	h := r.header()
	if r.frag == nil || r.frag.ownHeader {
		h.Del(HeaderVaryValue)
	}
	hr := &r.htReq
	hr.Method, hr.Path, hr.Query = h.Method(), r.req.URI().Path(), r.req.URI().QueryString()
	hr.Host, hr.Protocol, hr.Header = h.Host(), h.Protocol(), h
	hr.Client, hr.ClientPort, hr.HTTPS = r.client, int(r.port), r.tls
	hr.Port = htaccess.HostPort(hr.Host, r.tls)
	r.htLine = append(append(append(r.htLine[:0], hr.Method...), ' '), h.RequestURI()...)
	r.htLine = append(append(r.htLine, ' '), hr.Protocol...)
	hr.RequestLine = r.htLine
	t.Eval(hr, &r.ht)
	r.htReq.Header = nil
	o := &r.ht
	if o.Status != 0 {
		return r.refused()
	}
	if len(o.Cache.Vary) > 0 && (r.frag == nil || r.frag.ownHeader) {
		h.SetBytesV(HeaderVaryValue, o.Cache.Vary)
	}
	return proceed
}

// refused handles a request the rules refuse or redirect: a docroot
// answers it (with the site's ErrorDocument), uncached; in proxy mode
// ramjet answers the LiteSpeed block's [F] or [G] itself.
func (r *request) refused() verdict {
	if r.inline {
		return declined
	}
	switch {
	case r.frag != nil:
		r.res.err = errRefused
		return answered
	case r.s.Docroot != nil:
		r.pass = csHtaccess
		return proceed
	}
	code := r.ht.Status
	r.ctx.SetStatusCode(code)
	r.ctx.SetContentType("text/plain; charset=utf-8")
	r.ctx.SetBodyString(fasthttp.StatusMessage(code) + "\n")
	r.res.written = true
	return answered
}

// lsCache is what the site's LiteSpeed cache rules said of the request;
// nil for a site without .htaccess rules.
func (r *request) lsCache() *htaccess.Cache {
	if r.s.ht == nil {
		return nil
	}
	return &r.ht.Cache
}

// lsRules is the part of the LiteSpeed cache rules a fill needs, copied
// out of the request (a background refresh outlives it).
type lsRules struct {
	// control is X-LiteSpeed-Cache-Control as the rules' TTL spells it,
	// used when the response carries none; nil: none.
	control     []byte
	varyCookies []string
}

// lsRules copies what the fill needs of the request's LiteSpeed cache
// rules; nil when they set no TTL and no vary cookie (no allocation).
func (r *request) lsRules() *lsRules {
	lc := r.lsCache()
	if lc == nil || lc.TTL <= 0 && len(lc.VaryCookies) == 0 {
		return nil
	}
	ls := &lsRules{}
	if lc.TTL > 0 {
		kind := "public"
		if lc.Private {
			kind = "private"
		}
		ls.control = []byte(kind + ",max-age=" + strconv.FormatInt(lc.TTL, 10))
	}
	for _, c := range strings.Split(string(lc.VaryCookies), ",") {
		if c = strings.TrimSpace(c); c != "" {
			ls.varyCookies = append(ls.varyCookies, c)
		}
	}
	return ls
}
