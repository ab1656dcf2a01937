package proxy

import (
	"errors"
	"io"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// Lingering close (RFC 9112 9.6, nginx's lingering_close): after an early
// error answer (413, 431) the client is usually still sending. Closing
// with unread bytes makes the kernel send a reset, which can destroy the
// answer before the client reads it, so read and discard for a while.
const (
	lingerBytes = 64 << 20
	lingerTime  = 5 * time.Second
	lingerIdle  = 500 * time.Millisecond
)

// drain discards up to lingerBytes from r (reading through conn), until
// the client pauses for lingerIdle or lingerTime has passed.
func drain(r io.Reader, conn net.Conn) {
	if r == nil || conn == nil {
		return
	}
	buf := make([]byte, 32<<10)
	left := int64(lingerBytes)
	end := time.Now().Add(lingerTime)
	for left > 0 {
		now := time.Now()
		deadline := now.Add(lingerIdle)
		if deadline.After(end) {
			deadline = end
		}
		if !now.Before(end) || conn.SetReadDeadline(deadline) != nil {
			break
		}
		n, err := r.Read(buf[:min(int64(len(buf)), left)])
		left -= int64(n)
		if err != nil {
			break
		}
	}
	_ = conn.SetReadDeadline(time.Time{}) // the connection is closed next anyway
}

// rejectEarly answers a request refused before it was read whole, then
// lingers and closes the connection.
func rejectEarly(ctx *fasthttp.RequestCtx, body io.Reader, code int, msg string) {
	ctx.SetConnectionClose()
	drain(body, ctx.Conn())
	ctx.Response.Reset()
	ctx.SetConnectionClose()
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetStatusCode(code)
	ctx.SetBodyString(msg)
}

// errorHandler answers requests fasthttp could not parse.
func errorHandler(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne *net.OpError
	switch {
	case errors.As(err, &small):
		rejectEarly(ctx, ctx.Conn(), fasthttp.StatusRequestHeaderFieldsTooLarge, "Request Header Fields Too Large\n")
	case errors.As(err, &ne) && ne.Timeout():
		ctx.Error("Request Timeout\n", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("Bad Request\n", fasthttp.StatusBadRequest)
	}
}
