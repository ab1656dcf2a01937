package streamctx

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Contexts is a pool of the RequestCtx streams are served with: a
// request costs none once it is warm. The zero value is ready.
type Contexts struct {
	pool sync.Pool
	Log  Logger // what the contexts log through
}

// Get returns a context whose ctx.Conn() is c (a connection's stand-in,
// shared by its streams).
func (p *Contexts) Get(c net.Conn) *fasthttp.RequestCtx {
	ctx, _ := p.pool.Get().(*fasthttp.RequestCtx)
	if ctx == nil {
		ctx = new(fasthttp.RequestCtx)
	}
	ctx.Init2(c, p.Log, false)
	ctx.Response.Header.SetNoDefaultContentType(true) // as the HTTP/1.1 side
	return ctx
}

// Put resets what a handler may have set, closing body streams and
// io.Closer user values as fasthttp does after a request, and keeps ctx
// for the next stream.
func (p *Contexts) Put(ctx *fasthttp.RequestCtx) {
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.ResetUserValues()
	if ctx.Hijacked() {
		ctx.Hijack(nil) // streams cannot be hijacked; the handler got its response written
	}
	p.pool.Put(ctx)
}

// ContentLength is the length fasthttp would announce for resp, or -1
// for none.
func ContentLength(resp *fasthttp.Response, head bool) int {
	switch {
	case resp.IsBodyStream():
		return resp.Header.ContentLength()
	case head && len(resp.Body()) == 0:
		// Set for HEAD from the GET it mirrors; never set when that
		// length is unknown (a HEAD that reached PHP), and then none is
		// announced rather than 0.
		if len(resp.Header.Peek(fasthttp.HeaderContentLength)) == 0 {
			return -1
		}
		return resp.Header.ContentLength()
	}
	return len(resp.Body())
}

// Bodyless reports the statuses that never carry a body.
func Bodyless(status int) bool {
	return status < 200 || status == http.StatusNoContent || status == http.StatusNotModified
}

// ConnectionField reports the HTTP/1.1 connection-specific fields that
// HTTP/2 and HTTP/3 forbid (RFC 9113 §8.2.2, RFC 9114 §4.2), and
// Content-Length, which the servers set themselves (fasthttp's
// canonical spelling).
func ConnectionField(k []byte) bool {
	switch string(k) {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Content-Length":
		return true
	}
	return false
}

// Logger sends fasthttp's own messages (malformed requests and the
// like) to slog at debug level: they are the client's problem.
type Logger struct{ Log *slog.Logger }

func (l Logger) Printf(format string, args ...any) {
	l.Log.Debug(fmt.Sprintf(format, args...), "source", "fasthttp")
}

var _ fasthttp.Logger = Logger{}

// ErrNoConn: a stream's bytes travel in its protocol's frames, not
// through the stand-in connection.
var ErrNoConn = errors.New("streamctx: a stream has no connection of its own")

// Conn stands in for the connection in a stream's RequestCtx so that
// ctx.RemoteAddr, ctx.RemoteIP and ctx.LocalAddr work. One is shared by
// the streams of a connection and never changes; reading or writing it
// fails.
type Conn struct{ Local, Remote net.Addr }

func (*Conn) Read([]byte) (int, error)         { return 0, ErrNoConn }
func (*Conn) Write([]byte) (int, error)        { return 0, ErrNoConn }
func (*Conn) Close() error                     { return nil }
func (c *Conn) LocalAddr() net.Addr            { return c.Local }
func (c *Conn) RemoteAddr() net.Addr           { return c.Remote }
func (*Conn) SetDeadline(time.Time) error      { return nil }
func (*Conn) SetReadDeadline(time.Time) error  { return nil }
func (*Conn) SetWriteDeadline(time.Time) error { return nil }

var _ net.Conn = (*Conn)(nil)
