package h2

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ramjet-proxy/ramjet/internal/rawsock"
)

// Protocol limits this server announces and keeps.
const (
	maxReadFrame   = 1 << 20 // SETTINGS_MAX_FRAME_SIZE we accept
	maxSendFrame   = 16 << 10
	streamWindow   = 1 << 20 // SETTINGS_INITIAL_WINDOW_SIZE we announce
	connWindow     = 1 << 20 // the connection's receive window
	maxWindow      = 1<<31 - 1
	initialWindow  = 65535 // RFC 9113 §6.9.2, until the peer's SETTINGS say otherwise
	headerOverhead = 320   // MAX_HEADER_LIST_SIZE counts 32 bytes per field
	readBufSize    = 8 << 10
	windowBatch    = 32 << 10 // consumed bytes returned in one WINDOW_UPDATE
	closeFlush     = time.Second
)

var (
	errConnClosed  = errors.New("h2: connection closed")
	errStreamReset = errors.New("h2: stream reset")
	errDone        = errors.New("h2: connection done")
)

// conn serves one HTTP/2 connection. Its serve goroutine reads every
// frame and answers what it can at once (control frames, Inline hits);
// other streams run on the process's stream workers (streamctx.Shared).
// Everything written goes into out, which is written to the network when
// the reader is about to wait for the client (so the responses to one
// batch of requests leave in one write) or, while the reader waits, by
// the goroutine that added bytes.
type conn struct {
	s       *Server
	nc      net.Conn // the client connection: reads by serve, writes by flush
	standin net.Conn // every stream's ctx.Conn()
	// br is the read buffer, from readers; nil while the connection
	// waits for the client with nothing buffered (see awaitByte), so that
	// an idle connection holds none. Only serve uses it.
	br    *bufio.Reader
	src   source          // what br reads: a byte awaitByte read, then nc
	sock  syscall.RawConn // the socket under nc, which an idle wait polls; nil: waits read nc
	peek  func(uintptr)   // socketReady's test of sock, setting ready
	ready bool            // socketReady's answer
	fr    *http2.Framer   // reads by serve (through frames); writes with mu held

	// Owned by the serve goroutine.
	lastStream  uint32 // highest client stream id seen
	sawSettings bool
	armedAt     time.Time // when the idle read deadline was last set

	mu     sync.Mutex // guards everything below and the framer's writes
	wcond  sync.Cond  // signalled when a flush ends
	out    []byte     // frames not yet written; nil when no buffer is held
	outBox *[]byte    // the pooled buffer out came from
	readBy time.Time  // nc's read deadline, as waitForFrame or wakeIfDone last set it

	writing    bool  // a goroutine is in flush, writing without mu
	readerBusy bool  // serve has frames to process and will flush after them
	err        error // set once writing failed or the connection ended
	goingAway  bool  // GOAWAY sent: no new streams, close when none is left

	streams      map[uint32]*stream // handed to workers, until they finish
	sendWindow   int64              // connection flow control toward the client
	recvWindow   int64              // what the client may still send
	connUnacked  int64              // received bytes consumed, not yet returned
	peerWindow   int64              // the client's SETTINGS_INITIAL_WINDOW_SIZE
	peerMaxFrame int                // the client's SETTINGS_MAX_FRAME_SIZE
	waiting      int                // streams waiting for send window
}

func newConn(s *Server, nc, standin net.Conn) *conn {
	c := &conn{
		s:            s,
		nc:           nc,
		standin:      standin,
		streams:      make(map[uint32]*stream),
		sendWindow:   initialWindow,
		recvWindow:   connWindow,
		peerWindow:   initialWindow,
		peerMaxFrame: maxSendFrame,
	}
	c.wcond.L = &c.mu
	c.src.nc = nc
	c.sock, _ = rawsock.Under(nc) // nil without a socket: waits read nc
	c.takeReader(nc)
	c.fr = http2.NewFramer((*connWriter)(c), (*frames)(c))
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(maxReadFrame)
	c.fr.MaxHeaderListSize = uint32(s.cfg.MaxHeaderBytes + headerOverhead)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	switch sc := standin.(type) {
	case *streamConn:
		sc.owner = c
	case *tlsStreamConn:
		sc.owner = c
	}
	return c
}

// serve runs the connection until the client leaves, a protocol error
// ends it, or a GOAWAY'd connection has no stream left.
func (c *conn) serve() {
	defer c.teardown()
	if !c.readPreface() {
		return
	}
	c.mu.Lock()
	_ = c.fr.WriteSettings( // errors surface through c.err
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: maxReadFrame},
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: c.s.cfg.MaxConcurrentStreams},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: c.fr.MaxHeaderListSize},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: streamWindow},
	)
	_ = c.fr.WriteWindowUpdate(0, connWindow-initialWindow)
	c.flush(true)
	c.mu.Unlock()
	if c.s.track(c, true) {
		c.goAway(http2.ErrCodeNo) // the server is shutting down
	}
	defer c.s.track(c, false)
	for {
		if err := c.waitForFrame(); err != nil {
			return
		}
		f, err := c.fr.ReadFrame()
		if err == nil && !c.sawSettings {
			if _, ok := f.(*http2.SettingsFrame); !ok {
				err = http2.ConnectionError(http2.ErrCodeProtocol)
			}
			c.sawSettings = true
		}
		if err == nil {
			err = c.process(f)
		}
		if err != nil && !c.recover(err) {
			return
		}
	}
}

func (c *conn) readPreface() bool {
	_ = c.nc.SetReadDeadline(time.Now().Add(c.s.sniffTimeout())) // a failure shows in the read
	var buf [len(http2.ClientPreface)]byte
	if _, err := io.ReadFull(c.br, buf[:]); err != nil || string(buf[:]) != http2.ClientPreface {
		return false
	}
	return c.nc.SetReadDeadline(time.Time{}) == nil
}

// recover handles an error of one frame: a stream error resets that
// stream and serving goes on; a connection error is answered with
// GOAWAY; anything else (the connection failed) ends serving.
func (c *conn) recover(err error) bool {
	var se http2.StreamError
	var ce http2.ConnectionError
	switch {
	case errors.As(err, &se):
		if se.StreamID > c.lastStream && se.StreamID%2 == 1 {
			c.lastStream = se.StreamID
		}
		c.resetStream(se.StreamID, se.Code)
		return true
	case errors.As(err, &ce):
		c.goAway(http2.ErrCode(ce))
	case errors.Is(err, http2.ErrFrameTooLarge):
		c.goAway(http2.ErrCodeFrameSize)
	}
	return false
}

// frameBuffered reports whether a whole frame is already read: then
// ReadFrame does not wait for the client.
func (c *conn) frameBuffered() bool {
	if c.br == nil {
		return false
	}
	n := c.br.Buffered()
	if n < 9 {
		return false
	}
	h, _ := c.br.Peek(9) // buffered: cannot fail
	return n >= 9+(int(h[0])<<16|int(h[1])<<8|int(h[2]))
}

// waitForFrame returns at once when a frame is buffered. Otherwise it
// writes what the last frames produced and waits, at a frame boundary,
// for the client's next bytes: that wait is where the idle timeout and
// the wake-up of a GOAWAY'd connection with no stream left apply.
func (c *conn) waitForFrame() error {
	if c.frameBuffered() {
		return nil
	}
	for {
		c.mu.Lock()
		c.readerBusy = false
		c.flush(false)
		if c.err != nil || c.goingAway && len(c.streams) == 0 {
			c.mu.Unlock()
			return errDone
		}
		if idle := c.s.cfg.IdleTimeout; idle > 0 {
			// Under mu, so that a wake-up deadline set by another
			// goroutine is never overwritten by this one.
			if now := time.Now(); now.Sub(c.armedAt) > idle/8 {
				c.readBy = now.Add(idle)
				_ = c.nc.SetReadDeadline(c.readBy) // a failure shows in the read
				c.armedAt = now
			}
		}
		c.mu.Unlock()
		err := c.awaitByte()
		if err == nil {
			c.mu.Lock()
			c.readerBusy = true
			c.mu.Unlock()
			return nil
		}
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			return err
		}
		c.mu.Lock()
		idle := c.s.cfg.IdleTimeout > 0 && len(c.streams) == 0 && !c.goingAway && time.Since(c.armedAt) >= c.s.cfg.IdleTimeout
		c.mu.Unlock()
		if idle {
			c.goAway(http2.ErrCodeNo)
		}
		c.armedAt = time.Time{} // re-arm
	}
}

// goAway sends GOAWAY with the last stream this connection accepts.
// With ErrCodeNo the streams in flight finish and the connection closes
// after them; otherwise it closes now.
func (c *conn) goAway(code http2.ErrCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.goingAway {
		c.goingAway = true
		_ = c.fr.WriteGoAway(c.lastStream, code, nil) // errors surface through c.err
	}
	if code != http2.ErrCodeNo {
		_ = c.nc.SetWriteDeadline(time.Now().Add(closeFlush))
		c.flush(true)
		c.failLocked(errConnClosed)
		return
	}
	c.flushIfIdle()
	c.wakeIfDone()
}

// wakeIfDone cuts the reader's wait short when a GOAWAY'd connection
// has no stream left. mu must be held.
func (c *conn) wakeIfDone() {
	if c.goingAway && len(c.streams) == 0 {
		c.readBy = time.Now()
		_ = c.nc.SetReadDeadline(c.readBy) // a failure leaves the read to the client or the idle timeout
	}
}

// teardown ends the connection's streams: their workers see c.err and
// stop writing and reading bodies.
func (c *conn) teardown() {
	c.dropReader() // serve has stopped reading
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && c.goingAway {
		_ = c.nc.SetWriteDeadline(time.Now().Add(closeFlush))
		c.flush(true) // the GOAWAY and the last responses
	}
	c.failLocked(errConnClosed)
}

// failLocked records the connection's end and wakes every waiter.
func (c *conn) failLocked(err error) {
	if c.err == nil {
		c.err = err
	}
	for _, st := range c.streams {
		st.cond.Broadcast()
	}
	c.wcond.Broadcast()
	if !c.writing && c.outBox != nil {
		putOut(c.takeOut())
	}
}

// connWriter is the framer's io.Writer: it appends to out. mu must be
// held.
type connWriter conn

func (w *connWriter) Write(p []byte) (int, error) {
	c := (*conn)(w)
	if c.err == nil {
		c.grow()
		c.out = append(c.out, p...)
	}
	return len(p), nil
}

// readers are the connections' read buffers: a connection holds one only
// while the client's bytes are coming, not while it is idle.
var readers sync.Pool

// takeReader gives c a read buffer reading r.
func (c *conn) takeReader(r io.Reader) {
	br, ok := readers.Get().(*bufio.Reader)
	if ok {
		br.Reset(r)
	} else {
		br = bufio.NewReaderSize(r, readBufSize)
	}
	c.br = br
	c.s.readBufs.Add(1)
}

// dropReader gives c's read buffer back, if it holds one.
func (c *conn) dropReader() {
	if c.br == nil {
		return
	}
	c.br.Reset(nil) // keeps no connection reachable from the pool
	readers.Put(c.br)
	c.br = nil
	c.s.readBufs.Add(-1)
}

// awaitByte returns once the client's next byte is in br. With nothing
// buffered it waits without a read buffer: br goes back to readers and a
// one-byte read waits on the connection itself (crypto/tls keeps the rest
// of a record it decrypted), so that an idle connection holds no read
// buffer. The byte is then the first br reads.
func (c *conn) awaitByte() error {
	if c.br != nil && c.br.Buffered() > 0 {
		return nil
	}
	c.dropReader()
	n, err := c.readFirst()
	if n == 0 {
		if err == nil {
			err = io.ErrNoProgress
		}
		return err
	}
	c.src.pending = true
	c.takeReader(&c.src)
	return nil
}

// source is what a connection's br reads: the byte awaitByte read, then
// the connection.
type source struct {
	nc      net.Conn
	first   [1]byte
	pending bool
}

func (s *source) Read(p []byte) (int, error) {
	if s.pending && len(p) > 0 {
		p[0] = s.first[0]
		s.pending = false
		return 1, nil
	}
	return s.nc.Read(p)
}

// frames is the framer's io.Reader: the connection's br, which serve
// holds whenever it reads a frame (after awaitByte or frameBuffered).
type frames conn

func (f *frames) Read(p []byte) (int, error) { return (*conn)(f).br.Read(p) }
