package proxy

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/accesslog"
)

// siteLog is where a site's requests go: the writer of its file, shared
// with the other sites naming it, and the format of its lines.
type siteLog struct {
	w      *accesslog.Writer
	format accesslog.Format
	// name is the site as its lines name it: its first host name; nil for
	// the default site, whose lines name the request's host.
	name []byte
}

// logPart is the access log's part of the request.
type logPart struct {
	// start is when admit began, for the access log's request time (only
	// set and read when the site logs); buf holds its line, reused.
	start time.Time
	buf   []byte
	// wafLog is the line's WAF field: kept here, no allocation per line.
	wafLog accesslog.WAF
}

func newLogPart() logPart { return logPart{buf: make([]byte, 0, logBufStart)} }

func (l *logPart) reset() {
	l.start = time.Time{}
	l.buf = l.buf[:0]
	l.wafLog.Outcome, l.wafLog.Score, l.wafLog.Rules, l.wafLog.Data = "", 0, nil, ""
}

// began notes that the request began now (admit), for the access log's
// request time: the clock is read only for a site that logs.
func (l *logPart) began(s *site) {
	if s.log != nil {
		l.start = time.Now()
	}
}

// protoNames are the access log's protocol of each protocol but
// HTTP/1.x, whose request line names its own (as nginx logs them).
var protoNames = [...][]byte{protoH2: []byte("HTTP/2.0"), protoH3: []byte("HTTP/3.0")}

const (
	noOrigin    = time.Duration(-1) // Record.OriginTime of a request the upstream never saw
	logBufStart = 512               // a request's line buffer, grown by longer lines and kept
)

// stageLog writes the access log line of a client's request, once it is
// answered: what the client is sent (status, body length, Cache-Status),
// how long it took and how long the upstream took. The line is formatted
// into the request's own buffer and handed to the file's writer, which
// writes it from its own goroutine; nothing here allocates or waits for
// the disk. Fragments are part of their page's line, not lines of their
// own: they do not run it.
func stageLog(r *request) verdict {
	proto, sent := r.via.Protocol(), sentBytes(r.ctx)
	r.p.metrics.served(proto, sent)
	if r.s.log == nil {
		return proceed
	}
	l := r.s.log
	rec := r.logRecord(l, proto, sent)
	r.logPart.buf = l.format.Append(r.logPart.buf[:0], &rec)
	l.w.Log(r.logPart.buf)
	return proceed
}

// logRecord is the request's line as the client was answered. Its time
// is when the request came (as Apache's %t): one clock reading with the
// wall time per request, at admit; the request time needs only the
// monotonic clock, which is cheaper to read.
func (r *request) logRecord(l *siteLog, proto protocol, sent int64) accesslog.Record {
	ctx, h := r.ctx, r.header()
	rec := accesslog.Record{
		Time:        r.start,
		Addr:        r.remoteIP(),
		Method:      h.Method(),
		URI:         h.RequestURI(),
		Protocol:    h.Protocol(),
		Status:      ctx.Response.StatusCode(),
		Bytes:       sent,
		Referer:     h.Referer(),
		UserAgent:   h.UserAgent(),
		CacheStatus: ctx.Response.Header.PeekBytes(hdrCacheStatus),
		RequestTime: time.Since(r.start),
		OriginTime:  noOrigin,
		Site:        l.name,
	}
	if proto != protoH1 {
		rec.Protocol = protoNames[proto]
	}
	if r.res.origin > 0 {
		rec.OriginTime = time.Duration(r.res.origin)
	}
	if rec.Site == nil {
		rec.Site = stripPort(h.Host())
	}
	if w := &r.waf; w.outcome != wafNone && len(w.rules) > 0 {
		r.wafLog = accesslog.WAF{Outcome: w.outcome.String(), Score: w.score, Rules: w.rules, Data: w.data}
		rec.WAF = &r.wafLog
	}
	return rec
}

// sentBytes is the length of the body the client is sent: as set in the
// response, the announced length of a stream, or -1 for a stream of
// unknown length. The line is written before fasthttp sends the body, so
// a client that goes away mid-body is not seen here.
func sentBytes(ctx *fasthttp.RequestCtx) int64 {
	resp := &ctx.Response
	code := resp.StatusCode()
	switch {
	case ctx.IsHead() || resp.SkipBody || code < 200 || code == fasthttp.StatusNoContent || code == fasthttp.StatusNotModified:
		return 0
	case resp.IsBodyStream():
		return int64(max(resp.Header.ContentLength(), -1)) // negative: chunked or until close
	}
	return int64(len(resp.Body()))
}
