package docroot

import (
	"bytes"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
	"github.com/ramjet-proxy/ramjet/proxy/htaccess"
)

// evaluation is one request's .htaccess evaluation and its input,
// pooled: a request that the memo answers allocates nothing for it.
type evaluation struct {
	o           htaccess.Outcome
	hr          htaccess.Request
	line        []byte // THE_REQUEST
	path, query []byte // where an evaluation again takes the request
}

var evaluations = sync.Pool{New: func() any { return new(evaluation) }}

// htRequest fills hr, for the .htaccess tree, from a request as the
// proxy forwards it: the client from the last X-Forwarded-For hop, the
// scheme from X-Forwarded-Proto, the client's port from the proxy's
// header. line is scratch space for THE_REQUEST.
func htRequest(hr *htaccess.Request, req *fasthttp.Request, line []byte) []byte {
	c := clientOf(req)
	hr.Method, hr.Path, hr.Query = req.Header.Method(), req.URI().Path(), req.URI().QueryString()
	hr.Host, hr.Protocol, hr.Header = req.Header.Host(), req.Header.Protocol(), &req.Header
	hr.HTTPS = c.https
	hr.Client, _ = netip.ParseAddr(c.addr)
	hr.ClientPort, _ = strconv.Atoi(c.rport)
	hr.Port = htaccess.HostPort(hr.Host, c.https)
	line = append(append(append(line[:0], hr.Method...), ' '), req.Header.RequestURI()...)
	line = append(append(line, ' '), hr.Protocol...)
	hr.RequestLine = line
	return line
}

// serveHtaccess answers req under the site's .htaccess files: what they
// refuse or redirect is answered here; the rest is served from the path
// they rewrote it to, with their environment for PHP and their headers
// on the answer. key (0: none) is DoForKey's.
func (h *Handler) serveHtaccess(c phppool.Client, key uint64, req *fasthttp.Request, resp *fasthttp.Response) error {
	ev := evaluations.Get().(*evaluation)
	defer evaluations.Put(ev)
	o := &ev.o
	h.evaluate(ev, key, req)
	t, done, err := h.htTarget(ev, key, req, resp)
	if done {
		return err
	}
	switch t.kind {
	case kindPHP:
		if cause, off := o.PHPOff(); off {
			// Apache would serve the source or refuse it: never run it,
			// never show it (fail closed, as for access rules).
			h.log.Debug("htaccess: PHP is off here: 403", "path", t.scriptName, "rule", cause)
			h.errorPage(req, resp, o, fasthttp.StatusForbidden)
			return nil
		}
		err = h.servePHP(c, req, resp, &t, o)
	case kindStatic:
		err = h.serveStatic(req, resp, &t)
		if mt := o.MimeType(t.file); mt != "" && resp.StatusCode() != fasthttp.StatusNotModified {
			resp.Header.SetContentType(mt)
		}
	case kindRedirect:
		// Under a .htaccess, mod_dir's: an absolute URL, with the query
		// the rules left; elsewhere nginx's relative one, as without.
		loc := t.location
		if o.Configured() {
			loc = absoluteURL(req, loc)
		}
		if len(o.Query) > 0 {
			loc += "?" + string(o.Query)
		}
		redirectTo(resp, loc)
		o.Apply(htaccess.Answer{Status: resp.StatusCode(), Generated: true}, &resp.Header, time.Now())
		return nil
	default:
		h.errorPage(req, resp, o, statusOf(t.kind))
		return nil
	}
	if err == nil {
		a := htaccess.Answer{Status: resp.StatusCode(), File: t.file, Script: t.kind == kindPHP}
		if t.kind == kindPHP {
			a.File = ""
		}
		if t.info != nil {
			a.ModTime = t.info.ModTime()
		}
		o.Apply(a, &resp.Header, time.Now())
	}
	return err
}

// maxSubRounds bounds the paths a request is evaluated again for (an
// index that is a directory's again, rules that rewrite it back).
const maxSubRounds = 4

// htTarget resolves what the evaluation in ev serves, or answers what
// it decided instead (done). A directory's index and the front
// controller are another path than the one evaluated: as Apache's
// mod_dir does with an internal redirect, that path is evaluated in its
// turn — its <Files> sections, access and rewrite rules, PHP switches —
// and its outcome replaces the first, exactly as a direct request's.
func (h *Handler) htTarget(ev *evaluation, key uint64, req *fasthttp.Request, resp *fasthttp.Response) (t target, done bool, err error) {
	o := &ev.o
	for range maxSubRounds {
		if o.Status != 0 {
			h.answerOutcome(req, resp, o)
			return t, true, nil
		}
		if len(o.Proxy) > 0 {
			return t, true, h.proxyRule(req, resp, o)
		}
		if index, ok := o.DirectoryIndex(); ok && bytes.HasSuffix(o.Path, []byte{'/'}) {
			t = h.resolveIndex(string(o.Path), index)
		} else {
			t = h.lookupBytes(o.Path)
		}
		if t.url == "" {
			return t, false, nil
		}
		key = subKey(key, t.url)
		h.evaluateAt(ev, key, req, t.url)
	}
	h.log.Warn("htaccess: a directory index or front controller kept leading elsewhere", "path", string(req.URI().Path()))
	h.errorPage(req, resp, o, fasthttp.StatusInternalServerError)
	return t, true, nil
}

// subKey is the memo key of req evaluated again at path: a hash of both
// (0 stays 0: nothing remembered).
func subKey(key uint64, path string) uint64 {
	if key == 0 {
		return 0
	}
	const prime = 1099511628211 // FNV-1a's
	for i := 0; i < len(path); i++ {
		key = (key ^ uint64(path[i])) * prime
	}
	return key | 1
}

// evaluate runs the .htaccess files on req into ev.o, or takes what
// they decided for a request with the same key from the tree's memo.
func (h *Handler) evaluate(ev *evaluation, key uint64, req *fasthttp.Request) {
	h.evaluateAt(ev, key, req, "")
}

// evaluateAt is evaluate for req taken to path ("": its own) with the
// query the previous evaluation left, as an internal redirect is.
func (h *Handler) evaluateAt(ev *evaluation, key uint64, req *fasthttp.Request, path string) {
	var token htaccess.MemoToken
	if key != 0 {
		var ok bool
		if token, ok = h.tree.RecallServe(key, &ev.o); ok {
			return
		}
	}
	ev.line = htRequest(&ev.hr, req, ev.line)
	rewritten := false
	if path != "" {
		ev.path = append(ev.path[:0], path...)
		ev.query = append(ev.query[:0], ev.o.Query...)
		ev.hr.Path, ev.hr.Query, rewritten = ev.path, ev.query, ev.o.Rewritten
	}
	h.tree.Eval(&ev.hr, &ev.o)
	ev.o.Rewritten = ev.o.Rewritten || rewritten
	ev.hr = htaccess.Request{} // nothing of req kept in the pool
	if key != 0 {
		h.tree.RememberServe(key, token, &ev.o)
	}
}

// proxyRule sends a [P] rule's request to the origin it names, if the
// configuration names it (never anywhere a .htaccess writer chooses).
func (h *Handler) proxyRule(req *fasthttp.Request, resp *fasthttp.Response, o *htaccess.Outcome) error {
	target := string(o.Proxy)
	for _, origin := range h.cfg.ProxyOrigins {
		rest, ok := strings.CutPrefix(target, strings.TrimSuffix(origin, "/"))
		if !ok || h.fallback == nil || rest != "" && rest[0] != '/' && rest[0] != '?' {
			continue
		}
		if rest == "" || rest[0] == '?' {
			rest = "/" + rest
		}
		out := fasthttp.AcquireRequest()
		defer fasthttp.ReleaseRequest(out)
		req.CopyTo(out)
		out.SetRequestURI(rest)
		out.Header.Del(HeaderRemotePort)
		out.Header.Del(HeaderServerAddr)
		return h.fallback.Do(out, resp)
	}
	h.log.Warn("htaccess: [P] to an origin the configuration does not name", "target", target, "rule", o.Cause)
	refuseStatus(resp, fasthttp.StatusBadGateway)
	resp.Header.Set("X-LiteSpeed-Cache-Control", "no-cache")
	return nil
}

func statusOf(k kind) int {
	switch k {
	case kindForbidden:
		return fasthttp.StatusForbidden
	case kindBadPath:
		return fasthttp.StatusBadRequest
	}
	return fasthttp.StatusNotFound
}

func absoluteURL(req *fasthttp.Request, path string) string {
	scheme := "http://"
	if string(req.Header.Peek("X-Forwarded-Proto")) == "https" {
		scheme = "https://"
	}
	return scheme + string(req.Header.Host()) + path
}

// answerOutcome answers what the .htaccess files decided instead of
// serving: a redirect, 401 with the realm, or an error status.
func (h *Handler) answerOutcome(req *fasthttp.Request, resp *fasthttp.Response, o *htaccess.Outcome) {
	switch st := o.Status; {
	case st >= 300 && st < 400 && len(o.Location) > 0:
		resp.SetStatusCode(st)
		resp.Header.Set("Location", string(o.Location))
		resp.Header.SetContentType("text/html; charset=iso-8859-1")
		resp.SetBodyString(fasthttp.StatusMessage(st) + "\n")
		resp.Header.Set("X-LiteSpeed-Cache-Control", "no-cache")
		o.Apply(htaccess.Answer{Status: st, Generated: true}, &resp.Header, time.Now())
	case st == fasthttp.StatusUnauthorized:
		h.errorPage(req, resp, o, st)
		resp.Header.Set("WWW-Authenticate", `Basic realm="`+strings.ReplaceAll(o.Realm, `"`, `\"`)+`"`)
	default:
		if st >= 500 && o.Err == nil {
			// Parse errors were logged with the file; this is a request's.
			h.log.Warn("htaccess: "+o.Cause, "path", string(req.URI().Path()), "status", st)
		}
		h.errorPage(req, resp, o, st)
	}
}

// errorPage answers status as the scopes' ErrorDocument says: a text, a
// redirect, a local document served with the status, or the plain page.
func (h *Handler) errorPage(req *fasthttp.Request, resp *fasthttp.Response, o *htaccess.Outcome, status int) {
	kind, v := o.ErrorDocument(status)
	switch kind {
	case htaccess.DocText:
		resp.SetStatusCode(status)
		resp.Header.SetContentType("text/html; charset=iso-8859-1")
		resp.SetBodyString(v)
	case htaccess.DocURL:
		resp.SetStatusCode(fasthttp.StatusFound)
		resp.Header.Set("Location", v)
		resp.Header.SetContentType("text/html; charset=iso-8859-1")
		resp.SetBodyString("Found\n")
	case htaccess.DocLocal:
		if !h.localErrorPage(req, resp, o, status, v) {
			refuseStatus(resp, status)
		}
	default:
		refuseStatus(resp, status)
	}
	resp.Header.Set("X-LiteSpeed-Cache-Control", "no-cache")
	o.Apply(htaccess.Answer{Status: status, Generated: true}, &resp.Header, time.Now())
}

// localErrorPage serves the ErrorDocument path doc with status: a file's
// contents, or a script run with REDIRECT_STATUS (as Apache's internal
// redirect does); it reports false when doc serves nothing.
func (h *Handler) localErrorPage(req *fasthttp.Request, resp *fasthttp.Response, o *htaccess.Outcome, status int, doc string) bool {
	p, _, _ := strings.Cut(doc, "?")
	t := h.lookup(p)
	switch t.kind {
	case kindStatic:
		sub := fasthttp.AcquireRequest()
		defer fasthttp.ReleaseRequest(sub)
		sub.Header.SetMethod(fasthttp.MethodGet)
		if err := h.serveStatic(sub, resp, &t); err != nil || resp.StatusCode() != fasthttp.StatusOK {
			return false
		}
		resp.Header.Del("ETag")
		resp.Header.Del("Last-Modified")
	case kindPHP:
		if err := h.servePHP(nil, req, resp, &t, o); err != nil { // an error document: its client's request has run
			return false
		}
	default:
		return false
	}
	resp.SetStatusCode(status)
	return true
}

func refuseStatus(resp *fasthttp.Response, status int) {
	resp.SetStatusCode(status)
	resp.Header.SetContentType("text/plain; charset=utf-8")
	resp.SetBodyString(fasthttp.StatusMessage(status) + "\n")
}

// appendHtaccessParams adds what the .htaccess files give a script: the
// query they rewrote, their environment (E=, SetEnv, SetEnvIf; an
// earlier round's as REDIRECT_*), the user Basic auth let in, and the
// LiteSpeed vary value the LiteSpeed Cache plugin reads.
func appendHtaccessParams(ps []phppool.Param, req *fasthttp.Request, o *htaccess.Outcome) []phppool.Param {
	if o.Rewritten {
		for i := range ps {
			if ps[i].Name == "QUERY_STRING" {
				ps[i].Value = string(o.Query)
			}
		}
		ps = append(ps, phppool.Param{Name: "REDIRECT_URL", Value: string(req.URI().Path())})
	}
	o.Env(func(name string, value []byte) {
		ps = append(ps, phppool.Param{Name: name, Value: string(value)})
	})
	if o.User != "" {
		ps = append(ps, phppool.Param{Name: "REMOTE_USER", Value: o.User}, phppool.Param{Name: "AUTH_TYPE", Value: "Basic"})
	}
	if len(o.Cache.Vary) > 0 {
		ps = append(ps, phppool.Param{Name: "LSCACHE_VARY_VALUE", Value: string(o.Cache.Vary)})
	}
	return ps
}
