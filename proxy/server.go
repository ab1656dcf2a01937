package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
)

// ServerConfig is a client-facing listener. Zero timeouts mean none.
type ServerConfig struct {
	Name         string // for logs: "main", "admin"
	Addr         string
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// BufferBody is the largest request body read into memory before the
	// handler runs; larger ones stream to it. 0 means 64 KiB.
	BufferBody     int
	MaxHeaderBytes int // larger headers get 431; 0 means 16 KiB
	MaxConns       int // 0 means fasthttp's default
	// ProxyProtocol, when set, takes only connections that open with a
	// PROXY header from its allowed networks, at the addresses the
	// header names. nil takes connections at their own addresses.
	ProxyProtocol *proxyproto.Config
}

// Server owns one listener and the goroutine serving it.
type Server struct {
	cfg  ServerConfig
	srv  *fasthttp.Server
	ln   net.Listener
	log  *slog.Logger
	done chan error
	once sync.Once
}

// NewServer prepares a server for h; Start listens.
func NewServer(cfg ServerConfig, h fasthttp.RequestHandler, log *slog.Logger) *Server {
	if cfg.BufferBody <= 0 {
		cfg.BufferBody = 64 << 10
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = 16 << 10
	}
	srv := &fasthttp.Server{
		Handler:                       h,
		Name:                          "ramjet",
		ReadTimeout:                   cfg.ReadTimeout,
		WriteTimeout:                  cfg.WriteTimeout,
		IdleTimeout:                   cfg.IdleTimeout,
		MaxRequestBodySize:            cfg.BufferBody,
		ReadBufferSize:                cfg.MaxHeaderBytes,
		Concurrency:                   cfg.MaxConns,
		StreamRequestBody:             true,
		DisablePreParseMultipartForm:  true,
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
		Logger:                        fasthttpLogger{log},
		ErrorHandler:                  errorHandler,
	}
	return &Server{cfg: cfg, srv: srv, log: log, done: make(chan error, 1)}
}

// ErrorHandler answers requests fasthttp could not parse (400, 408, 431)
// as the servers of NewServer do; other listeners in front of the proxy
// (h2.Config.ErrorHandler) use it to answer alike.
func ErrorHandler(ctx *fasthttp.RequestCtx, err error) { errorHandler(ctx, err) }

// Start listens on the configured address and serves until Shutdown.
func (s *Server) Start(context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("%s listener: %w", s.cfg.Name, err)
	}
	if s.cfg.ProxyProtocol != nil {
		ln = proxyproto.NewListener(ln, *s.cfg.ProxyProtocol)
	}
	s.ln = ln
	go func() { s.done <- s.srv.Serve(ln) }()
	s.log.Info("listening", "listener", s.cfg.Name, "addr", ln.Addr().String(), "proxy_protocol", s.cfg.ProxyProtocol != nil)
	return nil
}

// Addr is the bound address (useful with port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops accepting, lets in-flight requests finish until ctx
// ends, then closes what is left and waits for the serving goroutine.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		if s.ln == nil {
			return
		}
		err = s.srv.ShutdownWithContext(ctx)
		// fasthttp closes only the listeners Serve has registered; right
		// after Start it may not have yet, and would then serve on.
		_ = s.ln.Close() // usually closed already
		if serr := <-s.done; serr != nil && !errors.Is(serr, net.ErrClosed) {
			err = errors.Join(err, serr)
		}
	})
	return err
}

// fasthttpLogger sends fasthttp's own messages (malformed requests and
// the like) to slog at debug level: they are the client's problem.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "source", "fasthttp")
}
