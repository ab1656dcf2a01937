package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// nextProto is HTTP/3's ALPN token (RFC 9114 §3.1).
const nextProto = "h3"

// udpBuffer is the socket buffer size asked for: quic-go's advice, enough
// for a burst of full-size datagrams at high rates.
const udpBuffer = 7 << 20

// Config is one HTTP/3 listener. Zero values take the defaults named.
type Config struct {
	Name string // for logs: "h3"
	// Addr is the UDP address, the TLS listener's host:port.
	Addr string
	// Conn, when set, is served instead of a socket opened on Addr: one
	// taken over from the process before. Shutdown closes it.
	Conn *net.UDPConn
	// TLS gives the certificates (GetCertificate by SNI, or
	// Certificates); a copy offers only "h3" by ALPN and TLS 1.3, as
	// QUIC requires.
	TLS *tls.Config
	// HandshakeTimeout bounds the QUIC handshake; 0 means 10 s.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection with no packet for that long; 0
	// means 30 s.
	IdleTimeout time.Duration
	// WriteTimeout bounds each write of a response's bytes to a stream
	// (the client must grant flow control in that time); 0 means none.
	WriteTimeout time.Duration
	// MaxHeaderBytes bounds a request's field section (announced as
	// SETTINGS_MAX_FIELD_SECTION_SIZE); larger ones get 431. 0 means
	// 16 KiB.
	MaxHeaderBytes int
	// MaxConcurrentStreams is how many requests one connection may have
	// open at once (QUIC stream credit: the client cannot open more). 0
	// means 100.
	MaxConcurrentStreams int
	// StreamWindow and ConnWindow bound the receive flow-control windows
	// (quic-go grows them from 512 KiB as a client keeps up); 0 means
	// 6 MiB per stream and 15 MiB per connection.
	StreamWindow, ConnWindow uint64
	// Disable0RTT refuses 0-RTT: every request waits for the handshake.
	// With 0-RTT on, only GET and HEAD requests without a body are
	// served from early data; others wait for the handshake, which
	// proves they are no replay (RFC 9114 §10.9, RFC 8470).
	Disable0RTT bool
}

// Validate reports every problem in c at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("h3: no listen address"))
	}
	if c.TLS == nil || c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil && len(c.TLS.Certificates) == 0 {
		errs = append(errs, errors.New("h3: TLS config has no certificate"))
	}
	if c.HandshakeTimeout < 0 || c.IdleTimeout < 0 || c.WriteTimeout < 0 {
		errs = append(errs, errors.New("h3: negative timeout"))
	}
	if c.MaxHeaderBytes < 0 || c.MaxConcurrentStreams < 0 {
		errs = append(errs, errors.New("h3: negative size or count"))
	}
	return errors.Join(errs...)
}

// Stats count what the listener did since it started.
type Stats struct {
	Conns atomic.Int64 // QUIC connections accepted
	// EarlyAccepted counts requests served from 0-RTT data (GET and
	// HEAD); EarlyRejected those that came as 0-RTT data and had to
	// wait for the handshake (any other method, or a body).
	EarlyAccepted, EarlyRejected atomic.Int64
	// Rejected counts streams refused after GOAWAY; Reset those ended
	// by a protocol error of the client's.
	Rejected, Reset atomic.Int64
}

// Server owns one UDP socket, the QUIC transport on it and its
// connections; their streams run on the process's stream workers
// (streamctx.Shared), counted in wg and streams for Shutdown.
type Server struct {
	cfg     Config
	handler fasthttp.RequestHandler
	log     *slog.Logger
	tls     *tls.Config
	quic    *quic.Config
	ctxs    streamctx.Contexts
	stats   Stats

	udp *net.UDPConn
	tr  *quic.Transport
	ln  *quic.EarlyListener

	wg      sync.WaitGroup         // the accept loop, every connection's goroutine and every stream
	streams atomic.Int64           // streams being served
	conns   streamctx.Conns[*conn] // open connections; draining once Shutdown began
	once    sync.Once              // Shutdown and Close run once
}

// NewServer prepares a server for h; Start listens.
func NewServer(cfg Config, h fasthttp.RequestHandler, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxHeaderBytes == 0 {
		cfg.MaxHeaderBytes = 16 << 10
	}
	if cfg.MaxConcurrentStreams == 0 {
		cfg.MaxConcurrentStreams = 100
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	tc := cfg.TLS.Clone()
	tc.NextProtos = []string{nextProto}
	tc.MinVersion = tls.VersionTLS13
	s := &Server{
		cfg: cfg, handler: h, log: log, tls: tc, ctxs: streamctx.Contexts{Log: streamctx.Logger{Log: log}},
		quic: &quic.Config{
			// quic-go's own limit is the handshake's idle time; twice it
			// bounds the whole handshake.
			HandshakeIdleTimeout:           cfg.HandshakeTimeout / 2,
			MaxIdleTimeout:                 cfg.IdleTimeout,
			MaxIncomingStreams:             int64(cfg.MaxConcurrentStreams),
			MaxIncomingUniStreams:          maxUniStreams,
			InitialStreamReceiveWindow:     initialWindow(cfg.StreamWindow, initialStreamWindow),
			MaxStreamReceiveWindow:         cfg.StreamWindow,
			InitialConnectionReceiveWindow: initialWindow(cfg.ConnWindow, initialConnWindow),
			MaxConnectionReceiveWindow:     cfg.ConnWindow,
			Allow0RTT:                      !cfg.Disable0RTT,
		},
	}
	return s, nil
}

// initialStreamWindow and initialConnWindow are quic-go's starting
// receive windows, which it grows up to StreamWindow and ConnWindow.
const (
	initialStreamWindow = 512 << 10
	initialConnWindow   = 768 << 10
)

// initialWindow starts a window at quic-go's default, or at the limit
// when that is smaller (0: quic-go's defaults for both).
func initialWindow(limit, def uint64) uint64 {
	if limit == 0 {
		return 0
	}
	return min(limit, def)
}

// maxUniStreams is the unidirectional streams a client may open: its
// control stream and the two QPACK streams, and a few unknown ones
// (RFC 9114 §6.2.3 has clients probe with reserved types).
const maxUniStreams = 8

// Start opens the UDP socket, raises its buffers (logging the advice
// when the kernel refuses) and serves until Shutdown or Close.
func (s *Server) Start(context.Context) error {
	if s.udp = s.cfg.Conn; s.udp == nil {
		addr, err := net.ResolveUDPAddr("udp", s.cfg.Addr)
		if err != nil {
			return fmt.Errorf("h3: %s listener: %w", s.cfg.Name, err)
		}
		if s.udp, err = net.ListenUDP("udp", addr); err != nil {
			return fmt.Errorf("h3: %s listener: %w", s.cfg.Name, err)
		}
	}
	s.raiseBuffers()
	s.tr = &quic.Transport{Conn: s.udp}
	var err error
	if s.ln, err = s.tr.ListenEarly(s.tls, s.quic); err != nil {
		_ = s.udp.Close() // the error that matters is the listener's
		return fmt.Errorf("h3: %s listener: %w", s.cfg.Name, err)
	}
	s.wg.Add(1)
	go s.accept()
	s.log.Info("listening", "listener", s.cfg.Name, "addr", s.udp.LocalAddr().String(), "protocol", "HTTP/3 (QUIC)",
		"0rtt", !s.cfg.Disable0RTT)
	return nil
}

// raiseBuffers asks for udpBuffer-sized socket buffers, past the
// kernel's cap when the process may (root: SO_RCVBUFFORCE on Linux).
// Linux caps them at net.core.rmem_max / wmem_max (208 KiB by default),
// which drops packets at high rates: the advice says how to raise the cap.
func (s *Server) raiseBuffers() {
	_ = s.udp.SetReadBuffer(udpBuffer)  // checked below
	_ = s.udp.SetWriteBuffer(udpBuffer) // checked below
	rd, wr, err := socketBuffers(s.udp, false)
	if err == nil && (rd < udpBuffer || wr < udpBuffer) {
		rd, wr, err = socketBuffers(s.udp, true)
	}
	if err != nil {
		s.log.Debug("UDP buffer sizes unknown", "listener", s.cfg.Name, "err", err)
		return
	}
	if rd < udpBuffer || wr < udpBuffer {
		s.log.Warn("UDP socket buffers are smaller than HTTP/3 needs at high rates; raise the kernel's limits: "+
			"sysctl -w net.core.rmem_max=7500000 net.core.wmem_max=7500000",
			"listener", s.cfg.Name, "receive_kib", rd/1024, "send_kib", wr/1024, "wanted_kib", udpBuffer/1024)
	}
}

// socketBuffers reports c's buffer sizes as granted (Linux reports twice
// that, its bookkeeping included), forcing udpBuffer first with force.
func socketBuffers(c *net.UDPConn, force bool) (rd, wr int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		if force {
			forceBuffers(int(fd), udpBuffer)
		}
		if rd, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF); serr == nil {
			wr, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
		}
	})
	return rd / 2, wr / 2, errors.Join(err, serr)
}

// Addr is the bound UDP address (useful with port 0).
func (s *Server) Addr() net.Addr { return s.udp.LocalAddr() }

// Stats are the listener's counters.
func (s *Server) Stats() *Stats { return &s.stats }

// accept runs each new connection on a goroutine of its own until the
// listener closes.
func (s *Server) accept() {
	defer s.wg.Done()
	for {
		qc, err := s.ln.Accept(context.Background())
		if err != nil {
			return // the listener closed: Shutdown or Close
		}
		s.stats.Conns.Add(1)
		c := newConn(s, qc)
		s.wg.Add(1)
		go c.serve()
	}
}

// track adds or removes a connection; adding reports whether Shutdown
// began, when the connection must GOAWAY at once.
func (s *Server) track(c *conn, add bool) bool {
	return s.conns.Track(c, add)
}

// Shutdown stops taking connections, sends GOAWAY on every one, lets
// the streams in flight finish until ctx ends, then closes what is left
// and the socket. Handlers still running at ctx's end are left to finish
// (nothing can cut them); the error then counts them.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		if s.ln == nil {
			return
		}
		_ = s.ln.Close() // no new connections; the transport serves the open ones
		for _, c := range s.conns.Drain() {
			c.goAway()
		}
		err = s.wait(ctx)
	})
	return err
}

// Close closes every connection and the socket at once.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return s.Shutdown(ctx)
}

// wait waits for every connection to end, or for ctx; then it closes
// the connections left and the transport, and waits for the goroutines
// that still can end.
func (s *Server) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		for _, c := range s.conns.Drain() {
			_ = c.qc.CloseWithError(errNoError, "shutting down") // streams' reads and writes fail now
		}
		select {
		case <-done:
		case <-time.After(time.Second): // a handler that does not return
			err = fmt.Errorf("h3: %s listener: %d streams still running: %w", s.cfg.Name, s.streams.Load(), ctx.Err())
		}
	}
	return errors.Join(err, s.tr.Close(), ignoreClosed(s.udp.Close()))
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
