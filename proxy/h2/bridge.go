package h2

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// connBridge serves the streams of one HTTP/2 connection with the
// server's fasthttp handler: each stream gets a pooled RequestCtx filled
// from the net/http request, and the handler's response is copied back,
// body streamed. Not carried over: the stream's cancellation (a reset
// stream shows as failing body reads and writes, not as ctx.Done),
// hijacking, and fasthttp's TimeoutError responses.
type connBridge struct {
	s    *Server
	conn net.Conn // stands in for the connection in every stream's ctx
}

func newConnBridge(s *Server, c net.Conn) *connBridge {
	sc := streamConn{laddr: c.LocalAddr(), raddr: c.RemoteAddr()}
	switch tc := c.(type) {
	case *tls.Conn:
		return &connBridge{s: s, conn: &tlsStreamConn{streamConn: sc, state: tc.ConnectionState()}}
	case *h2cConn:
		if s.cfg.BehindTLS {
			return &connBridge{s: s, conn: &tlsStreamConn{streamConn: sc}}
		}
	}
	return &connBridge{s: s, conn: &sc}
}

func (b *connBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := b.s.acquireCtx(b.conn)
	defer b.s.releaseCtx(ctx)
	fillRequest(&ctx.Request, r)
	b.s.handler(ctx)
	writeResponse(w, r, &ctx.Response)
}

func (s *Server) acquireCtx(c net.Conn) *fasthttp.RequestCtx {
	ctx, _ := s.ctxPool.Get().(*fasthttp.RequestCtx)
	if ctx == nil {
		ctx = new(fasthttp.RequestCtx)
	}
	ctx.Init2(c, s.logger, false)
	ctx.Response.Header.SetNoDefaultContentType(true) // as the HTTP/1.1 side
	return ctx
}

// releaseCtx resets what a handler may have set, closing body streams
// and io.Closer user values as fasthttp does after a request.
func (s *Server) releaseCtx(ctx *fasthttp.RequestCtx) {
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.ResetUserValues()
	if ctx.Hijacked() {
		ctx.Hijack(nil) // HTTP/2 streams cannot be hijacked; the handler got its response written
	}
	s.ctxPool.Put(ctx)
}

// fillRequest copies r into req. The body is not copied: req streams it
// from r.Body, as fasthttp's StreamRequestBody does for large bodies.
func fillRequest(req *fasthttp.Request, r *http.Request) {
	h := &req.Header
	h.SetMethod(r.Method)
	h.SetRequestURI(r.RequestURI) // :path as sent
	h.SetHost(r.Host)             // :authority, or Host when absent
	for k, vs := range r.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		req.SetBodyStream(r.Body, int(r.ContentLength)) // -1: length unknown
	}
}

// writeResponse sends resp on w: headers without the HTTP/1.1 connection
// ones, Content-Length as fasthttp would send it, then the body, a
// stream copied and flushed as it arrives.
func writeResponse(w http.ResponseWriter, r *http.Request, resp *fasthttp.Response) {
	status := resp.StatusCode()
	head := r.Method == http.MethodHead
	copyHeaders(w.Header(), resp, status, head)
	w.WriteHeader(status)
	switch {
	case head || bodyless(status):
	case resp.IsBodyStream():
		copyStream(w, resp.BodyStream())
		_ = resp.CloseBodyStream() // its reader's close error is not the client's concern
	default:
		_, _ = w.Write(resp.Body()) // a write error means the client went away
	}
}

// copyHeaders fills h from resp with two allocations whatever the
// number of fields: one string holding every value, cut into the
// values, and one array backing the value slices (each capped at its
// length, so a later append copies instead of overwriting a neighbour).
func copyHeaders(h http.Header, resp *fasthttp.Response, status int, head bool) {
	n := contentLength(resp, head)
	if bodyless(status) {
		n = -1
	}
	var b strings.Builder
	fields, size := 1, 20 // room for Content-Length
	for k, v := range resp.Header.All() {
		if !connectionHeader(k) {
			fields++
			size += len(v)
		}
	}
	b.Grow(size)
	for k, v := range resp.Header.All() {
		if !connectionHeader(k) {
			b.Write(v)
		}
	}
	if n >= 0 {
		var d [20]byte
		b.Write(strconv.AppendInt(d[:0], int64(n), 10))
	}
	all := b.String()
	vals := make([]string, 0, fields)
	off := 0
	for k, v := range resp.Header.All() {
		if connectionHeader(k) {
			continue
		}
		vals = append(vals, all[off:off+len(v)])
		off += len(v)
		key := headerKey(k)
		if vs, ok := h[key]; ok {
			h[key] = append(vs, vals[len(vals)-1])
		} else {
			h[key] = vals[len(vals)-1 : len(vals) : len(vals)]
		}
	}
	if len(resp.Header.Server()) == 0 {
		h["Server"] = serverName // fasthttp's Name on the HTTP/1.1 side
	}
	if _, ok := h["Date"]; !ok {
		h["Date"] = httpDate() // as fasthttp adds it; x/net/http2 would format one per response
	}
	if n >= 0 {
		vals = append(vals, all[off:])
		h["Content-Length"] = vals[len(vals)-1:]
	}
}

// dateCache is the Date header of the current second.
var dateCache atomic.Pointer[dateEntry]

type dateEntry struct {
	sec int64
	v   []string
}

func httpDate() []string {
	now := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == now.Unix() {
		return d.v
	}
	d := &dateEntry{sec: now.Unix(), v: []string{now.UTC().Format(http.TimeFormat)}}
	dateCache.Store(d)
	return d.v
}

var serverName = []string{name}

// contentLength is the length fasthttp would announce, or -1 for none.
func contentLength(resp *fasthttp.Response, head bool) int {
	switch {
	case resp.IsBodyStream():
		return resp.Header.ContentLength()
	case head && len(resp.Body()) == 0:
		return resp.Header.ContentLength() // set for HEAD from the GET it mirrors
	default:
		return len(resp.Body())
	}
}

func bodyless(status int) bool {
	return status < 200 || status == http.StatusNoContent || status == http.StatusNotModified
}

// copyStream copies body to w, flushing after each read so that what a
// streaming handler flushed reaches the client without waiting for more.
func copyStream(w http.ResponseWriter, body io.Reader) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	flusher, _ := w.(http.Flusher)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // the stream was reset or the connection lost
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return // io.EOF, or the handler's stream failed: end the stream here
		}
	}
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// connectionHeader reports the HTTP/1.1 connection-specific headers that
// RFC 9113 §8.2.2 forbids in HTTP/2, and Content-Length, which
// writeResponse sets itself.
func connectionHeader(k []byte) bool {
	switch string(k) {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Content-Length":
		return true
	}
	return false
}

// headerKey returns k as a string, without allocating for common names.
func headerKey(k []byte) string {
	if s, ok := commonHeaders[string(k)]; ok {
		return s
	}
	return string(k)
}

var commonHeaders = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		"Accept-Ranges", "Age", "Alt-Svc", "Cache-Control", "Cache-Status", "Content-Encoding",
		"Content-Language", "Content-Location", "Content-Range", "Content-Security-Policy",
		"Content-Type", "Date", "Etag", "ETag", "Expires", "Last-Modified", "Link", "Location",
		"Referrer-Policy", "Server", "Set-Cookie", "Strict-Transport-Security", "Vary",
		"X-Cache", "X-Content-Type-Options", "X-Frame-Options", "X-Powered-By", "X-Ramjet-Cache",
	} {
		m[k] = k
	}
	return m
}()

// IsHTTP2 reports whether ctx is an HTTP/2 stream served by this package.
func IsHTTP2(ctx *fasthttp.RequestCtx) bool {
	switch ctx.Conn().(type) {
	case *streamConn, *tlsStreamConn:
		return true
	}
	return false
}

// errStreamConn: a stream's bytes travel in HTTP/2 frames, not through
// the stand-in connection.
var errStreamConn = errors.New("h2: an HTTP/2 stream has no connection of its own")

// streamConn stands in for the connection in a stream's RequestCtx so
// that ctx.RemoteAddr, ctx.RemoteIP and ctx.LocalAddr work. It is shared
// by the streams of one connection and never changes.
type streamConn struct{ laddr, raddr net.Addr }

func (*streamConn) Read([]byte) (int, error)         { return 0, errStreamConn }
func (*streamConn) Write([]byte) (int, error)        { return 0, errStreamConn }
func (*streamConn) Close() error                     { return nil }
func (c *streamConn) LocalAddr() net.Addr            { return c.laddr }
func (c *streamConn) RemoteAddr() net.Addr           { return c.raddr }
func (*streamConn) SetDeadline(time.Time) error      { return nil }
func (*streamConn) SetReadDeadline(time.Time) error  { return nil }
func (*streamConn) SetWriteDeadline(time.Time) error { return nil }

// tlsStreamConn is a streamConn over TLS: fasthttp's ctx.IsTLS and
// ctx.TLSConnectionState find the handshake's state through it.
type tlsStreamConn struct {
	streamConn
	state tls.ConnectionState
}

func (*tlsStreamConn) Handshake() error                       { return nil }
func (c *tlsStreamConn) ConnectionState() tls.ConnectionState { return c.state }

var (
	_ http.Handler = (*connBridge)(nil)
	_ net.Conn     = (*streamConn)(nil)
	_ net.Conn     = (*tlsStreamConn)(nil)
)
