package h2

import (
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// outSize is the capacity of a connection's output buffer; flushAt is
// the fill at which a writer sends it rather than appending more.
const (
	outSize = 64 << 10
	flushAt = outSize - maxSendFrame - 9
)

var outPool = sync.Pool{New: func() any { b := make([]byte, 0, outSize); return &b }}

// putOut returns a buffer taken by takeOut, with the slice it grew to.
func putOut(bp *[]byte, b []byte) {
	if cap(b) <= 4*outSize {
		*bp = b[:0]
		outPool.Put(bp)
	}
}

// takeOut hands out over to a writer, leaving c without a buffer. mu
// must be held.
func (c *conn) takeOut() (*[]byte, []byte) {
	bp, b := c.outBox, c.out
	c.outBox, c.out = nil, nil
	return bp, b
}

// grow takes a pooled buffer for out when there is none (appends grow
// it past outSize only for a single large write). mu must be held.
func (c *conn) grow() {
	if c.outBox == nil {
		c.outBox = outPool.Get().(*[]byte)
		c.out = *c.outBox
	}
}

// flush writes out to the network. Only one goroutine writes at a
// time, without holding mu, taking whatever was added meanwhile until
// out is empty. When another goroutine is writing, flush leaves the
// bytes to it, and with wait also waits until it is done. mu must be
// held.
func (c *conn) flush(wait bool) {
	if c.writing {
		for wait && c.writing {
			c.wcond.Wait()
		}
		return
	}
	c.writing = true
	for len(c.out) > 0 && c.err == nil {
		bp, b := c.takeOut()
		c.mu.Unlock()
		if wt := c.s.cfg.WriteTimeout; wt > 0 {
			_ = c.nc.SetWriteDeadline(time.Now().Add(wt)) // a failure shows in the write
		}
		_, err := c.nc.Write(b)
		c.mu.Lock()
		putOut(bp, b)
		if err != nil {
			_ = c.nc.Close() // the reader sees it and ends the connection
			c.writing = false
			c.failLocked(err)
		}
	}
	c.writing = false
	c.wcond.Broadcast()
}

// flushIfIdle flushes unless the serve goroutine is processing frames:
// it flushes when it runs out of them, with whatever else they added.
func (c *conn) flushIfIdle() {
	if !c.readerBusy {
		c.flush(false)
	}
}

func (c *conn) appendFrameHeader(length int, t http2.FrameType, flags http2.Flags, id uint32) {
	c.grow()
	c.out = append(c.out, byte(length>>16), byte(length>>8), byte(length), byte(t), byte(flags),
		byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
}

// writeResponse writes st's response, or as much of it as the windows
// allow when !block, and reports whether it is complete; a body stream
// is left to writeBodyStream. mu must be held.
func (c *conn) writeResponse(st *stream, block bool) bool {
	if c.err != nil || st.reset {
		return true
	}
	resp := &st.ctx.Response
	if !st.headersSent {
		head := st.ctx.IsHead()
		status := resp.StatusCode()
		noBody := head || streamctx.Bodyless(status)
		stream := !noBody && resp.IsBodyStream()
		if !noBody && !stream {
			st.pending = resp.Body()
		}
		end := noBody || !stream && len(st.pending) == 0
		c.writeHeaders(st, resp, status, head, end)
		st.headersSent = true
		if end {
			c.flushIfIdle()
			return true
		}
		if stream {
			return false
		}
	}
	if !c.writeData(st, true, block) {
		return false
	}
	c.flushIfIdle()
	return true
}

// writeData sends st.pending in DATA frames within the flow-control
// windows, waiting for WINDOW_UPDATEs when block. It reports whether
// all was sent (or the stream or connection ended). mu must be held.
func (c *conn) writeData(st *stream, end, block bool) bool {
	for {
		if c.err != nil || st.reset {
			st.pending = nil
			return true
		}
		n := min(int64(len(st.pending)), c.sendWindow, st.sendWindow, int64(min(c.peerMaxFrame, maxSendFrame)))
		if n <= 0 && len(st.pending) > 0 {
			if !block {
				return false
			}
			c.flush(true) // the client grants more once it has what was sent
			if c.err != nil || st.reset || min(c.sendWindow, st.sendWindow) > 0 {
				continue
			}
			c.waiting++
			st.cond.Wait()
			c.waiting--
			continue
		}
		last := int(n) == len(st.pending)
		var flags http2.Flags
		if last && end {
			flags = http2.FlagDataEndStream
		}
		c.appendFrameHeader(int(n), http2.FrameData, flags, st.id)
		c.out = append(c.out, st.pending[:n]...)
		st.pending = st.pending[n:]
		c.sendWindow -= n
		st.sendWindow -= n
		if len(c.out) >= flushAt {
			c.flush(true)
		}
		if last {
			st.pending = nil
			return true
		}
	}
}

// writeBodyStream copies a body stream into DATA frames, each read
// flushed so that what a streaming handler flushed reaches the client
// without waiting for more. A failing stream resets the HTTP/2 stream:
// the client must not take a cut body for a whole one.
func (c *conn) writeBodyStream(st *stream) {
	resp := &st.ctx.Response
	body := resp.BodyStream()
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	var err error
	for err == nil {
		var n int
		n, err = body.Read(*bp)
		c.mu.Lock()
		if n > 0 {
			st.pending = (*bp)[:n]
			c.writeData(st, false, true)
			c.flushIfIdle()
		}
		gone := c.err != nil || st.reset
		c.mu.Unlock()
		if gone {
			break
		}
	}
	_ = resp.CloseBodyStream() // its reader's close error is not the client's concern
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.err != nil || st.reset:
	case err == io.EOF:
		c.appendFrameHeader(0, http2.FrameData, http2.FlagDataEndStream, st.id)
	default:
		st.reset = true
		_ = c.fr.WriteRSTStream(st.id, http2.ErrCodeInternal) // errors surface through c.err
	}
	c.flushIfIdle()
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// writeHeaders HPACK-encodes resp's status and fields as HTTP/2 and
// HTTP/3 send them (streamctx.Fields) into HEADERS and, past the
// client's frame size, CONTINUATION frames. mu must be held.
func (c *conn) writeHeaders(st *stream, resp *fasthttp.Response, status int, head, end bool) {
	f := fieldsPool.Get().(*streamctx.Fields)
	f.Response(resp, status, head)
	c.writeHeaderBlock(st.id, status, f, end)
	fieldsPool.Put(f)
}

// fieldsPool lends the fields of the header being encoded: a connection
// holds none between its responses (an idle one kept its last
// response's, about 1 KiB).
var fieldsPool = sync.Pool{New: func() any { return new(streamctx.Fields) }}

// writeHeaderBlock HPACK-encodes status and f into HEADERS and, past
// the client's frame size, CONTINUATION frames of stream id, with an
// encoder lent for the block (hpacktable.go); nothing keeps f after it.
// mu must be held.
func (c *conn) writeHeaderBlock(id uint32, status int, f *streamctx.Fields, end bool) {
	e := encoders.Get().(*headerEncoder)
	e.hb.b = e.hb.b[:0]
	e.field(":status", statusText(status))
	for name, v := range f.All() {
		e.field(bytesString(name), bytesString(v))
	}
	c.appendHeaderBlock(id, e.hb.b, end)
	e.release()
}

// appendHeaderBlock frames block as HEADERS and, past the client's
// frame size, CONTINUATION frames. mu must be held.
func (c *conn) appendHeaderBlock(id uint32, block []byte, end bool) {
	max := c.peerMaxFrame
	t, flags := http2.FrameHeaders, http2.Flags(0)
	if end {
		flags = http2.FlagHeadersEndStream
	}
	for {
		n := min(len(block), max)
		if n == len(block) {
			flags |= http2.FlagHeadersEndHeaders
		}
		c.appendFrameHeader(n, t, flags, id)
		c.out = append(c.out, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return
		}
		t, flags = http2.FrameContinuation, 0
	}
}

// statusText is the :status value of a code.
func statusText(code int) string {
	if code >= 100 && code < 600 {
		return statusTexts[code-100]
	}
	return strconv.Itoa(code)
}

var statusTexts = func() (s [500]string) {
	for i := range s {
		s[i] = strconv.Itoa(100 + i)
	}
	return s
}()
