package h2

import (
	"strconv"
	"strings"

	"golang.org/x/net/http2"
)

// process handles one frame read by serve. A returned StreamError or
// ConnectionError is answered by recover.
func (c *conn) process(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		return c.onHeaders(f)
	case *http2.DataFrame:
		return c.onData(f)
	case *http2.SettingsFrame:
		return c.onSettings(f)
	case *http2.WindowUpdateFrame:
		return c.onWindowUpdate(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			c.mu.Lock()
			_ = c.fr.WritePing(true, f.Data) // errors surface through c.err
			c.mu.Unlock()
		}
	case *http2.RSTStreamFrame:
		return c.onReset(f)
	case *http2.PriorityFrame:
		if f.StreamDep == f.StreamID {
			return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeProtocol}
		}
	case *http2.GoAwayFrame:
		c.goAway(http2.ErrCodeNo) // the client leaves: finish what runs
	case *http2.PushPromiseFrame, *http2.ContinuationFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	return nil // unknown frame types are ignored (RFC 9113 §5.5)
}

func (c *conn) onSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - c.peerWindow
			c.peerWindow = int64(s.Val)
			for _, st := range c.streams {
				if st.sendWindow+delta > maxWindow {
					return http2.ConnectionError(http2.ErrCodeFlowControl)
				}
				st.sendWindow += delta
				st.cond.Broadcast()
			}
		case http2.SettingMaxFrameSize:
			c.peerMaxFrame = int(s.Val)
		case http2.SettingHeaderTableSize:
			// bounds a table the encoder does not use (hpacktable.go)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.fr.WriteSettingsAck()
}

func (c *conn) onWindowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	inc := int64(f.Increment)
	if f.StreamID == 0 {
		if c.sendWindow+inc > maxWindow {
			return http2.ConnectionError(http2.ErrCodeFlowControl)
		}
		c.sendWindow += inc
		if c.waiting > 0 {
			for _, st := range c.streams {
				st.cond.Broadcast()
			}
		}
		return nil
	}
	st := c.streams[f.StreamID]
	if st == nil {
		if f.StreamID > c.lastStream {
			return http2.ConnectionError(http2.ErrCodeProtocol) // idle stream
		}
		return nil // closed: frames in flight are allowed
	}
	if st.sendWindow+inc > maxWindow {
		return http2.StreamError{StreamID: f.StreamID, Code: http2.ErrCodeFlowControl}
	}
	st.sendWindow += inc
	st.cond.Broadcast()
	return nil
}

func (c *conn) onReset(f *http2.RSTStreamFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.streams[f.StreamID]
	if st == nil {
		if f.StreamID > c.lastStream {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		return nil
	}
	st.reset = true // the worker finishes and removes it
	st.cond.Broadcast()
	return nil
}

// resetStream sends RST_STREAM and stops a stream a worker serves.
func (c *conn) resetStream(id uint32, code http2.ErrCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[id]; st != nil {
		if st.reset {
			return
		}
		st.reset = true
		st.cond.Broadcast()
	}
	_ = c.fr.WriteRSTStream(id, code) // errors surface through c.err
}

func (c *conn) onData(f *http2.DataFrame) error {
	id, size := f.StreamID, int64(f.Length)
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.recvWindow {
		return http2.ConnectionError(http2.ErrCodeFlowControl)
	}
	c.recvWindow -= size
	st := c.streams[id]
	if st == nil || st.remoteDone || st.reset {
		c.returnConn(size) // nobody reads it
		if st == nil && id > c.lastStream {
			return http2.ConnectionError(http2.ErrCodeProtocol) // idle stream
		}
		if st != nil && st.reset {
			return nil // reset by either side: frames in flight are allowed
		}
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeStreamClosed}
	}
	if size > st.recvWindow {
		c.returnConn(size)
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeFlowControl}
	}
	data := f.Data()
	st.recvWindow -= size
	if pad := size - int64(len(data)); pad > 0 {
		st.unacked += pad
		c.connUnacked += pad
	}
	st.received += int64(len(data))
	if st.declared >= 0 && st.received > st.declared || f.StreamEnded() && st.declared >= 0 && st.received != st.declared {
		c.returnConn(size)
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	}
	st.buf = append(st.buf, data...)
	if f.StreamEnded() {
		st.remoteDone = true
	}
	st.cond.Broadcast()
	return nil
}

// returnConn gives n received bytes back to the connection window at
// once (they will not be read). mu must be held.
func (c *conn) returnConn(n int64) {
	c.connUnacked += n
	c.sendConnUpdate()
}

func (c *conn) sendConnUpdate() {
	if c.connUnacked > 0 {
		_ = c.fr.WriteWindowUpdate(0, uint32(c.connUnacked)) // errors surface through c.err
		c.recvWindow += c.connUnacked
		c.connUnacked = 0
	}
}

// onHeaders opens a stream: refused over the limit, 431 when its header
// list was too large, otherwise answered inline or by a worker.
// HEADERS on an open stream are trailers, read and dropped.
func (c *conn) onHeaders(f *http2.MetaHeadersFrame) error {
	id := f.StreamID
	if id%2 == 0 {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	c.mu.Lock()
	if st := c.streams[id]; st != nil {
		defer c.mu.Unlock()
		if st.remoteDone || st.reset {
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeStreamClosed}
		}
		if !f.StreamEnded() {
			return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
		}
		st.remoteDone = true
		st.cond.Broadcast()
		return nil
	}
	if id <= c.lastStream {
		c.mu.Unlock()
		return http2.ConnectionError(http2.ErrCodeProtocol) // a closed stream
	}
	c.lastStream = id
	refused := c.goingAway || len(c.streams) >= int(c.s.cfg.MaxConcurrentStreams)
	c.mu.Unlock()
	switch {
	case f.HasPriority() && f.Priority.StreamDep == id:
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	case refused:
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeRefusedStream}
	}
	st := c.s.acquireStream(c, id)
	if f.Truncated {
		st.ctx.Response.SetStatusCode(431)
		st.remoteDone = true // a body that follows is refused as on a closed stream
		c.answer(st)
		return nil
	}
	if !fillRequest(st, f) {
		c.s.releaseStream(st)
		return http2.StreamError{StreamID: id, Code: http2.ErrCodeProtocol}
	}
	if inline := c.s.cfg.Inline; inline != nil && st.remoteDone {
		if inline(st.ctx) {
			c.answer(st)
			return nil
		}
		st.ctx.Response.Reset()
		st.ctx.Response.Header.SetNoDefaultContentType(true)
	}
	c.mu.Lock()
	c.streams[id] = st
	c.mu.Unlock()
	c.s.run(st)
	return nil
}

// answer writes the response st.ctx holds, from the serve goroutine: at
// once when the flow-control windows allow, or by a worker that waits
// for them (and streams a body stream).
func (c *conn) answer(st *stream) {
	c.mu.Lock()
	if !st.ctx.Response.IsBodyStream() && c.writeResponse(st, false) {
		c.mu.Unlock()
		c.s.releaseStream(st)
		return
	}
	st.finishOnly = true
	c.streams[st.id] = st
	c.mu.Unlock()
	c.s.run(st)
}

// fillRequest builds st.ctx's request from the decoded header fields
// and reports whether they make a valid request (RFC 9113 §8.3.1).
func fillRequest(st *stream, f *http2.MetaHeadersFrame) bool {
	h := &st.ctx.Request.Header
	var method, path, scheme, authority, host string
	declared := int64(-1)
	for _, hf := range f.Fields {
		if hf.IsPseudo() {
			switch hf.Name {
			case ":method":
				method = hf.Value
			case ":path":
				path = hf.Value
			case ":scheme":
				scheme = hf.Value
			case ":authority":
				authority = hf.Value
			default:
				return false
			}
			continue
		}
		switch hf.Name {
		case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade":
			return false
		case "te":
			if hf.Value != "trailers" {
				return false
			}
		case "content-length":
			n, err := strconv.ParseUint(hf.Value, 10, 63)
			if err != nil || declared >= 0 && int64(n) != declared {
				return false
			}
			declared = int64(n)
			continue // set with the body below
		case "host":
			// RFC 9113 8.3.1: a Host must agree with :authority, and
			// two Hosts with each other; the first is the one used.
			if authority != "" && !strings.EqualFold(authority, hf.Value) || host != "" && !strings.EqualFold(host, hf.Value) {
				return false
			}
			host = hf.Value
			continue
		}
		h.Add(hf.Name, hf.Value)
	}
	if method == "" || scheme == "" || path == "" || path[0] != '/' && !(path == "*" && method == "OPTIONS") {
		return false // CONNECT (no :path) is not served
	}
	if authority == "" {
		authority = host
	}
	h.SetMethod(method)
	h.SetRequestURI(path)
	h.SetHost(authority)
	st.remoteDone = f.StreamEnded()
	if st.remoteDone {
		if declared > 0 {
			return false
		}
		return true
	}
	st.declared = declared
	st.ctx.Request.SetBodyStream(&st.body, int(declared)) // -1: length unknown
	return true
}
