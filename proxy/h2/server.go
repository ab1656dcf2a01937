package h2

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// name is the Server header of responses that set none.
const name = "ramjet"

// Config is one client-facing listener. Zero timeouts mean none.
type Config struct {
	Name string // for logs: "tls", "h2c"
	Addr string
	// Listener, when set, is served instead of listening on Addr: a
	// socket taken over from the process before. Shutdown closes it.
	Listener net.Listener
	// TLS terminates TLS on the listener and offers h2 and http/1.1 by
	// ALPN (added to a copy of NextProtos when missing). nil means a
	// plain listener.
	TLS *tls.Config
	// H2C lets a plain listener also speak HTTP/2 with prior knowledge
	// (RFC 9113 §3.3), as a TLS terminator in front would. Ignored with
	// TLS.
	H2C bool
	// BehindTLS makes every request on a plain listener report
	// ctx.IsTLS() true: set it only when nothing but a TLS terminator
	// can reach the listener. It vouches for the scheme alone: the
	// terminator's address is nobody's client (FromTerminator). Ignored
	// with TLS.
	BehindTLS bool
	// ProxyProtocol, when set, takes only connections that open with a
	// PROXY header (before the TLS handshake, on a TLS listener) from
	// its allowed networks, at the addresses the header names. nil
	// takes connections at their own addresses.
	ProxyProtocol *proxyproto.Config
	// ReadTimeout bounds the TLS handshake and, per HTTP/1.1 request,
	// reading it (or its header, when HeaderReceived moves the deadline
	// on); for HTTP/2, reading the client preface (10 s when zero);
	// streams are bounded by IdleTimeout and WriteTimeout only. Zero
	// leaves handshakes unbounded.
	ReadTimeout time.Duration
	// HeaderReceived is fasthttp's hook at an HTTP/1.1 request header's
	// end: it may give the body a deadline of its own (see
	// proxy.ReadTimeouts). nil keeps ReadTimeout for the whole request.
	HeaderReceived func(*fasthttp.RequestHeader) fasthttp.RequestConfig
	WriteTimeout   time.Duration // for HTTP/2, each write of a connection's frames
	// IdleTimeout closes an HTTP/2 connection (GOAWAY) that has had no
	// stream and no frame for that long.
	IdleTimeout time.Duration
	// BufferBody is the largest HTTP/1.1 request body read into memory
	// before the handler runs; larger ones stream to it. HTTP/2 bodies
	// always stream. 0 means 64 KiB.
	BufferBody int
	// MaxHeaderBytes: larger HTTP/1.1 headers get 431, larger HTTP/2
	// header lists 431 or a stream reset. 0 means 16 KiB.
	MaxHeaderBytes int
	// MaxConns bounds open connections, idle ones included; MaxConnsPerIP
	// those of one client address (the one a PROXY header names). One
	// over is closed (after a short HTTP/1.1 answer on a plain listener;
	// a TLS client gets nothing before its handshake) and counted in
	// Listener().Stats(). 0 means none.
	MaxConns      int
	MaxConnsPerIP int
	// MaxConcurrentStreams is per HTTP/2 connection; more are refused.
	// 0 means 250.
	MaxConcurrentStreams uint32
	// ErrorHandler answers HTTP/1.1 requests fasthttp cannot parse. nil
	// means fasthttp's default.
	ErrorHandler func(*fasthttp.RequestCtx, error)
	// Inline answers an HTTP/2 request without a body at once, on the
	// connection's goroutine, when it can without blocking (a cache
	// hit): it fills ctx.Response and returns true. It returns false,
	// having changed nothing, to have the stream served by the handler
	// on a goroutine of its own. nil sends every stream to the handler.
	Inline func(ctx *fasthttp.RequestCtx) bool
	// WriteBufferSize is fasthttp's write buffer for HTTP/1.1 (the
	// handler may rely on it: proxy.WriteBufferSize). 0 means fasthttp's
	// default.
	WriteBufferSize int
	// Park parks the idle keep-alive HTTP/1.1 connections of a plain
	// listener as the main listener does (package conns): no goroutine,
	// no buffers while a terminator's pooled connection waits. Ignored
	// with TLS, whose records the socket's readiness does not show.
	Park bool
}

// Validate reports every problem in c at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("h2: no listen address"))
	}
	if c.ReadTimeout < 0 || c.WriteTimeout < 0 || c.IdleTimeout < 0 {
		errs = append(errs, errors.New("h2: negative timeout"))
	}
	if c.BufferBody < 0 || c.MaxHeaderBytes < 0 || c.WriteBufferSize < 0 || c.MaxConns < 0 || c.MaxConnsPerIP < 0 {
		errs = append(errs, errors.New("h2: negative size or count"))
	}
	if c.TLS != nil && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil && len(c.TLS.Certificates) == 0 {
		errs = append(errs, errors.New("h2: TLS config has no certificate"))
	}
	return errors.Join(errs...)
}

// Server owns one listener, the goroutine serving it and its HTTP/2
// connections; their streams' handlers run on the process's workers
// (streamctx.Shared), counted per server for Shutdown.
type Server struct {
	cfg     Config
	handler fasthttp.RequestHandler
	log     *slog.Logger
	logger  streamctx.Logger
	fast    *fasthttp.Server
	ctxs    streamctx.Contexts
	streams streamctx.Streams // handed to the workers (streamctx.Shared), not yet finished

	ln    net.Listener
	limit *conns.Listener // under ln: the limits and the accept back-off
	done  chan error      // the Serve goroutine's result
	once  sync.Once       // Shutdown runs once

	h2Conns  atomic.Int64           // HTTP/2 connections served so far
	readBufs atomic.Int64           // read buffers its connections hold (idle ones hold none)
	serving  sync.WaitGroup         // the goroutines of detached connections (detach.go)
	conns    streamctx.Conns[*conn] // those that sent SETTINGS; draining once Shutdown began
}

// NewServer prepares a server for h; Start listens.
func NewServer(cfg Config, h fasthttp.RequestHandler, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BufferBody == 0 {
		cfg.BufferBody = 64 << 10
	}
	if cfg.MaxHeaderBytes == 0 {
		cfg.MaxHeaderBytes = 16 << 10
	}
	if cfg.MaxConcurrentStreams == 0 {
		cfg.MaxConcurrentStreams = 250
	}
	if cfg.TLS != nil {
		cfg.TLS = withALPN(cfg.TLS)
	}
	s := &Server{
		cfg:     cfg,
		handler: h,
		log:     log,
		logger:  streamctx.Logger{Log: log},
		done:    make(chan error, 1),
		ctxs:    streamctx.Contexts{Log: streamctx.Logger{Log: log}},
	}
	s.fast = &fasthttp.Server{
		Handler:                      h,
		Name:                         name,
		ReadTimeout:                  cfg.ReadTimeout,
		HeaderReceived:               cfg.HeaderReceived,
		WriteTimeout:                 cfg.WriteTimeout,
		IdleTimeout:                  cfg.IdleTimeout,
		MaxRequestBodySize:           cfg.BufferBody,
		ReadBufferSize:               cfg.MaxHeaderBytes,
		WriteBufferSize:              cfg.WriteBufferSize,
		MaxIdleWorkerDuration:        conns.WorkerIdle,
		LazyRequestTime:              true, // as the plain listener's: nothing reads ctx.Time()
		Concurrency:                  cfg.MaxConns,
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		NoDefaultServerHeader:        true,
		NoDefaultContentType:         true,
		CloseOnShutdown:              true,
		Logger:                       s.logger,
		ErrorHandler:                 cfg.ErrorHandler,
		ConnState:                    ConnState,
	}
	s.fast.NextProto(http2.NextProtoTLS, s.serveH2)
	return s, nil
}

// withALPN returns a copy of c offering h2 and http/1.1.
func withALPN(c *tls.Config) *tls.Config {
	c = c.Clone()
	protos := slices.Clone(c.NextProtos)
	if !slices.Contains(protos, http2.NextProtoTLS) {
		protos = append([]string{http2.NextProtoTLS}, protos...)
	}
	if !slices.Contains(protos, "http/1.1") {
		protos = append(protos, "http/1.1")
	}
	c.NextProtos = protos
	return c
}

// Start listens on the configured address and serves until Shutdown.
// Connections go through the same limits as the plain listener's
// (package conns), before their TLS handshake or h2c sniffing: a client
// over its share costs no handshake.
func (s *Server) Start(context.Context) error {
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.Addr); err != nil {
			return fmt.Errorf("h2: %s listener: %w", s.cfg.Name, err)
		}
	}
	if s.cfg.ProxyProtocol != nil {
		ln = proxyproto.NewListener(ln, *s.cfg.ProxyProtocol)
	}
	s.limit = conns.NewListener(ln, conns.Config{Name: s.cfg.Name, MaxConns: s.cfg.MaxConns,
		MaxPerIP: s.cfg.MaxConnsPerIP, PlainHTTP: s.cfg.TLS == nil, Park: s.cfg.Park && s.cfg.TLS == nil}, s.log)
	ln = s.limit
	switch {
	case s.cfg.TLS != nil:
		ln = tlsListener{tls.NewListener(ln, s.cfg.TLS)}
	case s.cfg.H2C || s.cfg.BehindTLS:
		ln = newSniffListener(ln, s.cfg.H2C, s.cfg.BehindTLS, s.sniffTimeout())
	}
	s.ln = ln
	go func() { s.done <- s.fast.Serve(ln) }()
	s.log.Info("listening", "listener", s.cfg.Name, "addr", ln.Addr().String(),
		"tls", s.cfg.TLS != nil, "h2c", s.cfg.H2C && s.cfg.TLS == nil, "proxy_protocol", s.cfg.ProxyProtocol != nil)
	return nil
}

func (s *Server) sniffTimeout() time.Duration {
	if s.cfg.ReadTimeout > 0 {
		return s.cfg.ReadTimeout
	}
	return 10 * time.Second
}

// Addr is the bound address (useful with port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Listener is the listener that counts and limits the connections, for
// metrics; nil before Start.
func (s *Server) Listener() *conns.Listener { return s.limit }

// serveH2 runs one HTTP/2 connection; fasthttp calls it from its worker
// after ALPN (or the h2c preface) chose h2, and closes c after: a TLS
// connection it detaches to serve on a goroutine of its own (detach.go).
func (s *Server) serveH2(c net.Conn) error {
	switch x := c.(type) {
	case *detachableConn:
		s.serveDetached(x)
	case *h2cConn:
		s.serveConn(&x.replayConn, s.standin(c)) // reads the preface the sniffer took
	default:
		s.serveConn(c, s.standin(c))
	}
	return nil
}

// serveConn serves the HTTP/2 connection c until it ends; standin is
// every stream's ctx.Conn().
func (s *Server) serveConn(c, standin net.Conn) {
	s.h2Conns.Add(1)
	newConn(s, c, standin).serve()
}

// track adds or removes a connection that sent its SETTINGS; adding
// reports whether Shutdown began, when the connection must GOAWAY.
func (s *Server) track(c *conn, add bool) bool {
	return s.conns.Track(c, add)
}

// Shutdown stops accepting, sends GOAWAY on every HTTP/2 connection,
// lets in-flight requests and streams finish until ctx ends, then closes
// the HTTP/2 connections left and waits for the serving goroutine and
// for every stream worker still running a handler (a stream outlives its
// connection when the client leaves first). Handlers still running at
// ctx's end, HTTP/2 ones and HTTP/1.1 ones alike, are left to finish:
// neither fasthttp nor this package can cut them; the error then counts
// the HTTP/2 ones.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		if s.ln == nil {
			return
		}
		fastDone := make(chan error, 1)
		go func() { fastDone <- s.fast.ShutdownWithContext(ctx) }()
		err = s.drainH2(ctx, fastDone)
		// fasthttp closes only the listeners Serve has registered; right
		// after Start it may not have yet, and would then serve on.
		_ = s.ln.Close() // usually closed already
		if serr := <-s.done; serr != nil && !errors.Is(serr, net.ErrClosed) {
			err = errors.Join(err, serr)
		}
		if werr := s.streams.Wait(ctx); werr != nil {
			err = errors.Join(err, fmt.Errorf("h2: %s listener: %w", s.cfg.Name, werr))
		}
	})
	return err
}

// drainH2 sends GOAWAY on every HTTP/2 connection (and on those that
// start later) and waits for fasthttp's shutdown, which waits for every
// connection it serves (h2c ones included), then for the goroutines of
// the detached TLS ones. At ctx's end the connections left are closed.
func (s *Server) drainH2(ctx context.Context, fastDone <-chan error) error {
	for _, c := range s.conns.Drain() {
		c.goAway(http2.ErrCodeNo)
	}
	select {
	case err := <-fastDone:
		// fasthttp gives up at the same deadline: whichever case
		// wins, streams still open then are cut.
		if ctx.Err() != nil {
			s.closeH2Conns()
			return err
		}
		return errors.Join(err, s.waitServing(ctx))
	case <-ctx.Done():
		s.closeH2Conns()
		return errors.Join(ctx.Err(), <-fastDone)
	}
}

func (s *Server) closeH2Conns() {
	for _, c := range s.conns.Open() {
		_ = c.nc.Close() // the connection's reads fail and it ends
	}
}
