package docroot

import (
	"bytes"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/phppool"
)

// The proxy states the connection's client port and local address in
// these headers on a docroot site's request (it replaces any a client
// sent). They become REMOTE_PORT and SERVER_ADDR, never HTTP_* variables,
// and are removed before a request goes on to the fallback origin.
const (
	HeaderRemotePort = "X-Ramjet-Remote-Port"
	HeaderServerAddr = "X-Ramjet-Server-Addr"
)

// client is what the proxy said about the client in the forwarding
// headers it set on the upstream request.
type client struct {
	addr     string // REMOTE_ADDR: the hop the proxy appended
	rport    string // REMOTE_PORT
	saddr    string // SERVER_ADDR
	priorXFF string // what the client itself sent in X-Forwarded-For
	https    bool
	host     string // SERVER_NAME
	port     string // SERVER_PORT
	proto    string // SERVER_PROTOCOL
}

// clientOf reads the forwarding headers the proxy set on req: the last
// X-Forwarded-For hop is the client address, X-Forwarded-Proto its scheme.
func clientOf(req *fasthttp.Request) client {
	c := client{proto: string(req.Header.Protocol())}
	if xff := req.Header.Peek("X-Forwarded-For"); len(xff) > 0 {
		if i := bytes.LastIndexByte(xff, ','); i >= 0 {
			c.addr = string(bytes.TrimSpace(xff[i+1:]))
			c.priorXFF = string(bytes.TrimSpace(xff[:i]))
		} else {
			c.addr = string(bytes.TrimSpace(xff))
		}
	}
	c.rport = string(req.Header.Peek(HeaderRemotePort))
	c.saddr = string(req.Header.Peek(HeaderServerAddr))
	c.https = string(req.Header.Peek("X-Forwarded-Proto")) == "https"
	host := string(req.Header.Host())
	c.host = host
	if h, p, err := net.SplitHostPort(host); err == nil {
		c.host, c.port = h, p
	}
	if c.port == "" {
		c.port = "80"
		if c.https {
			c.port = "443"
		}
	}
	return c
}

// paramLists keeps the slices params builds: a request's list is handed
// back (putParams) once PHP has it, instead of a fresh one each time.
var paramLists = sync.Pool{New: func() any { return &paramList{ps: make([]phppool.Param, 0, 32)} }}

type paramList struct{ ps []phppool.Param }

func putParams(l *paramList) {
	clear(l.ps) // no strings kept alive
	l.ps = l.ps[:0]
	paramLists.Put(l)
}

// params builds the CGI variables nginx's fastcgi_params (plus
// SCRIPT_FILENAME and PATH_INFO) sends for a script, in a pooled list.
func (h *Handler) params(req *fasthttp.Request, t *target, contentLength int64) *paramList {
	c := clientOf(req)
	scheme := "http"
	if c.https {
		scheme = "https"
	}
	cl := ""
	if contentLength >= 0 && (contentLength > 0 || !req.Header.IsGet() && !req.Header.IsHead()) {
		cl = strconv.FormatInt(contentLength, 10)
	}
	l := paramLists.Get().(*paramList)
	ps := append(l.ps[:0],
		phppool.Param{Name: "GATEWAY_INTERFACE", Value: "CGI/1.1"},
		phppool.Param{Name: "SERVER_SOFTWARE", Value: "ramjet"},
		phppool.Param{Name: "QUERY_STRING", Value: string(req.URI().QueryString())},
		phppool.Param{Name: "REQUEST_METHOD", Value: string(req.Header.Method())},
		phppool.Param{Name: "CONTENT_TYPE", Value: string(req.Header.ContentType())},
		phppool.Param{Name: "CONTENT_LENGTH", Value: cl},
		phppool.Param{Name: "SCRIPT_FILENAME", Value: t.file},
		phppool.Param{Name: "SCRIPT_NAME", Value: t.scriptName},
		phppool.Param{Name: "REQUEST_URI", Value: string(req.Header.RequestURI())},
		phppool.Param{Name: "DOCUMENT_URI", Value: t.scriptName + t.pathInfo},
		phppool.Param{Name: "DOCUMENT_ROOT", Value: h.realRoot},
		phppool.Param{Name: "SERVER_PROTOCOL", Value: c.proto},
		phppool.Param{Name: "REQUEST_SCHEME", Value: scheme},
		phppool.Param{Name: "REMOTE_ADDR", Value: c.addr},
		phppool.Param{Name: "REMOTE_PORT", Value: c.rport},
		phppool.Param{Name: "SERVER_ADDR", Value: c.saddr},
		phppool.Param{Name: "SERVER_NAME", Value: c.host},
		phppool.Param{Name: "SERVER_PORT", Value: c.port},
		phppool.Param{Name: "REDIRECT_STATUS", Value: "200"},
	)
	if c.https {
		ps = append(ps, phppool.Param{Name: "HTTPS", Value: "on"})
	}
	if t.pathInfo != "" {
		ps = append(ps,
			phppool.Param{Name: "PATH_INFO", Value: t.pathInfo},
			phppool.Param{Name: "PATH_TRANSLATED", Value: filepath.Join(h.realRoot, filepath.FromSlash(t.pathInfo))})
	}
	ps = append(ps, h.cfg.ServerVars...)
	l.ps = appendHTTPParams(ps, req, c)
	return l
}

// appendHTTPParams passes request headers as HTTP_* variables, except the
// ones that are CGI variables already, "Proxy" (httpoxy: it would become
// HTTP_PROXY) and names with "_" (nginx's underscores_in_headers off: they
// could pose as a dashed header). The forwarding headers the proxy added
// are taken back out: here ramjet is the web server.
func appendHTTPParams(ps []phppool.Param, req *fasthttp.Request, c client) []phppool.Param {
	// Read before All, which parses the cookies and yields them
	// re-serialised: PHP gets the Cookie header as the client sent it.
	rawCookie := string(req.Header.Peek("Cookie"))
	for k, v := range req.Header.All() {
		name := string(k)
		switch {
		case strings.EqualFold(name, "Cookie") && rawCookie != "":
			v = []byte(rawCookie)
		case strings.EqualFold(name, "Content-Type"), strings.EqualFold(name, "Content-Length"),
			strings.EqualFold(name, "Proxy"), strings.IndexByte(name, '_') >= 0,
			strings.EqualFold(name, "X-Forwarded-Proto"), strings.EqualFold(name, "X-Forwarded-Host"),
			strings.EqualFold(name, HeaderRemotePort), strings.EqualFold(name, HeaderServerAddr):
			continue
		case strings.EqualFold(name, "X-Forwarded-For"):
			if c.priorXFF == "" {
				continue
			}
			v = []byte(c.priorXFF)
		}
		ps = append(ps, phppool.Param{Name: cgiName(name), Value: string(v)})
	}
	return ps
}

// cgiName turns "Accept-Encoding" into "HTTP_ACCEPT_ENCODING".
func cgiName(header string) string {
	b := make([]byte, 0, len("HTTP_")+len(header))
	b = append(b, "HTTP_"...)
	for i := 0; i < len(header); i++ {
		c := header[i]
		switch {
		case c == '-':
			c = '_'
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}
