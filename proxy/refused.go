package proxy

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
)

// A request fasthttp refuses (a malformed request line or header, a
// header over max_header_bytes, a header or body that never arrives)
// never reaches the pipeline, yet fail2ban jails count exactly these
// lines. ErrorHandler answers it and writes its line with what could be
// read of it, as nginx does: the request line (parsed, or as received),
// or "-" when none was read. The line goes to the log of the site its
// Host names, when a Host could be read, else to the default site's.
// The address is the connection's (a PROXY header's): trusted
// X-Forwarded-For is in the header that could not be read.

// ErrorHandler answers a request fasthttp could not read, as the
// package-level ErrorHandler does, and writes its access log line.
func (p *Proxy) ErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	errorHandler(ctx, err)
	g := p.enter()
	defer g.leave()
	rq := refusedRequest(&ctx.Request.Header, err)
	rq.host = []byte(normalHost(string(rq.host))) // read as a request's Host is: "A.TEST." is a.test's
	s := g.router.route(rq.host)
	if s.log == nil {
		return
	}
	l := s.log
	rec := accesslog.Record{
		Time: time.Now(), Addr: ctx.RemoteIP(),
		Method: rq.method, URI: rq.uri, Protocol: rq.proto, Line: rq.line,
		Status: ctx.Response.StatusCode(), Bytes: int64(len(ctx.Response.Body())),
		OriginTime: noOrigin, Site: l.name,
	}
	if rec.Site == nil {
		rec.Site = stripPort(rq.host)
	}
	l.w.Log(l.format.Append(make([]byte, 0, logBufStart), &rec))
}

// refused is what could be read of a refused request.
type refused struct {
	method, uri, proto []byte // the request line, when it splits in three
	line               []byte // else the line as received; nil: none read
	host               []byte
}

// refusedRequest reads what it can of a refused request: its parsed
// header when fasthttp kept one (a body that failed, a URI it could not
// parse), else the head fasthttp quotes in its error.
func refusedRequest(h *fasthttp.RequestHeader, err error) refused {
	if h.Len() > 0 { // parsed: a failed header read leaves it empty
		return refused{method: h.Method(), uri: h.RequestURI(), proto: h.Protocol(), host: h.Host()}
	}
	head := bytes.TrimLeft(receivedHead(err), "\r\n") // empty lines before a request are allowed (RFC 9112 2.2)
	line, rest, _ := bytes.Cut(head, []byte("\n"))
	rq := refused{line: bytes.TrimSuffix(line, []byte("\r")), host: headerIn(rest, "host")}
	if f := bytes.Split(rq.line, []byte(" ")); len(f) == 3 && len(f[0]) > 0 && len(f[1]) > 0 && len(f[2]) > 0 {
		rq.method, rq.uri, rq.proto, rq.line = f[0], f[1], f[2], nil
	}
	if len(rq.line) == 0 {
		rq.line = nil
	}
	return rq
}

// receivedHead is the start of the bytes a failed header read had
// received, which fasthttp's error ends with (", contents: " and the
// bytes Go-quoted; "%q...%q" when long: the first 200 bytes and the last
// 200). nil when the error quotes none (a timeout before a byte came,
// a header too large for the buffer to hold any line).
func receivedHead(err error) []byte {
	if err == nil {
		return nil
	}
	msg := err.Error()
	const mark = `, contents: "`
	i := strings.LastIndex(msg, mark)
	if i < 0 {
		return nil
	}
	q, qerr := strconv.QuotedPrefix(msg[i+len(mark)-1:])
	if qerr != nil {
		return nil
	}
	s, qerr := strconv.Unquote(q)
	if qerr != nil {
		return nil
	}
	return []byte(s)
}

// headerIn is the value of the header field name (lower case) among the
// complete lines of b, or nil.
func headerIn(b []byte, name string) []byte {
	for {
		line, rest, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			return nil // cut short: not a complete line
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			return nil // end of the header
		}
		k, v, found := bytes.Cut(line, []byte(":"))
		if found && bytes.EqualFold(k, []byte(name)) {
			return bytes.TrimSpace(v)
		}
		b = rest
	}
}
