package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/ramjet-proxy/ramjet/proxy/conns"
	"github.com/ramjet-proxy/ramjet/proxy/h1"
	"github.com/ramjet-proxy/ramjet/proxy/h2"
	"github.com/ramjet-proxy/ramjet/proxy/proxyproto"
	"github.com/ramjet-proxy/ramjet/proxy/streamctx"
)

// ServerConfig is a client-facing listener. Zero timeouts mean none.
type ServerConfig struct {
	Name string // for logs and metrics: "main", "admin"
	Addr string
	// Listener, when set, is served instead of listening on Addr: a
	// socket taken over from the process before (an upgrade's handover,
	// systemd's socket activation). Shutdown closes it.
	Listener net.Listener
	// HeaderTimeout bounds receiving a request's header: from the
	// connection's accept for its first request, from the first byte for
	// later ones (a slowloris client trickling a header is cut off here,
	// whatever IdleTimeout allows between requests).
	HeaderTimeout time.Duration
	// ReadTimeout bounds reading the body once the header is in.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration // between keep-alive requests
	// BufferBody is the largest request body read into memory before the
	// handler runs; larger ones stream to it. 0 means 64 KiB.
	BufferBody     int
	MaxHeaderBytes int // larger headers get 431; 0 means 16 KiB
	// MaxConns bounds open connections, idle ones included (503 and
	// close past it); MaxConnsPerIP those of one client address (429 and
	// close). 0 means none.
	MaxConns      int
	MaxConnsPerIP int
	// NoParking keeps every idle keep-alive connection on a goroutine of
	// its own, as fasthttp does, instead of parking it (package conns).
	NoParking bool
	// Metrics, when set, gets the listener's connection gauges and
	// counters.
	Metrics *metrics.Set
	// ProxyProtocol, when set, takes only connections that open with a
	// PROXY header from its allowed networks, at the addresses the
	// header names. nil takes connections at their own addresses.
	ProxyProtocol *proxyproto.Config
	// ErrorHandler answers the requests fasthttp cannot read (a Proxy's
	// also logs them); nil answers them with ErrorHandler, unlogged.
	ErrorHandler func(*fasthttp.RequestCtx, error)
	// Inline, when set (with parking on), answers the requests it can at
	// once (Proxy.ServeHit) on the connection's goroutine, outside
	// fasthttp's per-connection loop (package h1); the handler gets the
	// rest.
	Inline func(*fasthttp.RequestCtx) bool
}

// Server owns one listener and the goroutine serving it.
type Server struct {
	cfg  ServerConfig
	srv  *fasthttp.Server
	ln   *conns.Listener
	log  *slog.Logger
	lane *h1.Lane // nil without Inline
	done chan error
	once sync.Once
	wg   sync.WaitGroup // the lane's connections' goroutines
}

// NewServer prepares a server for h; Start listens.
func NewServer(cfg ServerConfig, h fasthttp.RequestHandler, log *slog.Logger) *Server {
	if cfg.BufferBody <= 0 {
		cfg.BufferBody = 64 << 10
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = 16 << 10
	}
	if cfg.ErrorHandler == nil {
		cfg.ErrorHandler = errorHandler
	}
	readTimeout, headerReceived := ReadTimeouts(cfg.HeaderTimeout, cfg.ReadTimeout)
	srv := &fasthttp.Server{
		Handler:                       h,
		Name:                          "ramjet",
		ReadTimeout:                   readTimeout,
		HeaderReceived:                headerReceived,
		ConnState:                     h2.ConnState, // parking (package conns)
		WriteTimeout:                  cfg.WriteTimeout,
		IdleTimeout:                   cfg.IdleTimeout,
		MaxRequestBodySize:            cfg.BufferBody,
		ReadBufferSize:                cfg.MaxHeaderBytes,
		WriteBufferSize:               WriteBufferSize,
		MaxIdleWorkerDuration:         conns.WorkerIdle,
		Concurrency:                   cfg.MaxConns, // served at once: at most the open ones
		StreamRequestBody:             true,
		DisablePreParseMultipartForm:  true,
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		LazyRequestTime:               true, // nothing reads ctx.Time(): no clock read per request for it
		ReduceMemoryUsage:             true, // the write buffer from a pool per answer: the last one's, in the CPU's cache
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
		Logger:                        fasthttpLogger{log},
		ErrorHandler:                  cfg.ErrorHandler,
	}
	s := &Server{cfg: cfg, srv: srv, log: log, done: make(chan error, 1)}
	if cfg.Inline != nil && !cfg.NoParking {
		s.lane = h1.New(h1.Config{Server: srv, Inline: cfg.Inline, Name: srv.Name,
			WriteTimeout: cfg.WriteTimeout, IdleTimeout: cfg.IdleTimeout,
			WriteBufferSize: WriteBufferSize, Log: streamctx.Logger{Log: log}})
		srv.Handler = closingOnStop(h, s.lane)
	}
	return s
}

// closingOnStop is h, whose answers close their connections once the
// lane stops, as fasthttp's own do in its Shutdown (CloseOnShutdown),
// which does not run on the lane's connections.
func closingOnStop(h fasthttp.RequestHandler, lane *h1.Lane) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		if lane.Stopping() {
			ctx.SetConnectionClose()
		}
	}
}

// ErrorHandler answers requests fasthttp could not parse (400, 408, 431)
// as the servers of NewServer do; other listeners in front of the proxy
// (h2.Config.ErrorHandler) use it to answer alike.
func ErrorHandler(ctx *fasthttp.RequestCtx, err error) { errorHandler(ctx, err) }

// Start listens on the configured address and serves until Shutdown.
func (s *Server) Start(ctx context.Context) error {
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = ListenTCP(ctx, s.cfg.Addr, s.cfg.IdleTimeout); err != nil {
			return fmt.Errorf("%s listener: %w", s.cfg.Name, err)
		}
	}
	if s.cfg.ProxyProtocol != nil {
		ln = proxyproto.NewListener(ln, *s.cfg.ProxyProtocol)
	}
	s.ln = conns.NewListener(ln, conns.Config{Name: s.cfg.Name, MaxConns: s.cfg.MaxConns,
		MaxPerIP: s.cfg.MaxConnsPerIP, Park: !s.cfg.NoParking, Yield: s.lane != nil, PlainHTTP: true}, s.log)
	RegisterConnMetrics(s.cfg.Metrics, s.cfg.Name, s.ln)
	if s.lane != nil && s.cfg.Metrics != nil {
		s.cfg.Metrics.GetOrCreateGauge(`ramjet_inline_answers_total{listener="`+s.cfg.Name+`"}`,
			func() float64 { return float64(s.lane.Answered()) })
	}
	if s.lane == nil {
		go func() { s.done <- s.srv.Serve(s.ln) }()
	} else {
		go func() { s.done <- s.serveLane() }()
	}
	s.log.Info("listening", "listener", s.cfg.Name, "addr", ln.Addr().String(), "proxy_protocol", s.cfg.ProxyProtocol != nil)
	return nil
}

// serveLane accepts the listener's connections, new and woken, each
// served by the lane on a goroutine of its own, until the listener
// closes.
func (s *Server) serveLane() error {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return err
		}
		s.wg.Go(func() { s.lane.Serve(c) })
	}
}

// ListenTCP opens a client listener on addr. No TCP keep-alive probes
// when idle connections time out (Go's default turns them on: four
// setsockopt calls per accepted connection, which nginx does not make):
// an idle connection ends at idle, a stuck write at the write timeout.
// Without an idle timeout the probes are what ends a vanished client's
// connection.
func ListenTCP(ctx context.Context, addr string, idle time.Duration) (net.Listener, error) {
	var lc net.ListenConfig
	if idle > 0 {
		lc.KeepAlive = -1
	}
	return lc.Listen(ctx, "tcp", addr)
}

// ReadTimeouts are fasthttp's ReadTimeout, which it applies to a
// request from its start (and to a TLS handshake), and the hook it calls
// at the header's end: with a header timeout the first is the header's
// and the hook moves the deadline to the body's (read); without, read
// bounds the whole request. Every client listener, plain or TLS, takes
// its timeouts from here.
func ReadTimeouts(header, read time.Duration) (time.Duration, func(*fasthttp.RequestHeader) fasthttp.RequestConfig) {
	if header <= 0 {
		return read, nil
	}
	body := read
	if body <= 0 {
		body = 100 * 365 * 24 * time.Hour // none; a zero RequestConfig.ReadTimeout would keep the header's
	}
	return header, func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if n := h.ContentLength(); n == 0 || n == -2 {
			// No body to read (Content-Length 0, or neither it nor
			// Transfer-Encoding: fasthttp's -2; chunked is -1): the
			// header's deadline, left armed, bounds no read, and moving
			// it would cost a timer change per request.
			return fasthttp.RequestConfig{}
		}
		return fasthttp.RequestConfig{ReadTimeout: body}
	}
}

// RegisterConnMetrics publishes a conns.Listener's gauges and counters
// in set (nil: nowhere), labelled with the listener's name.
func RegisterConnMetrics(set *metrics.Set, name string, l *conns.Listener) {
	if set == nil {
		return
	}
	lbl := `{listener="` + name + `"}`
	gauge := func(metric string, f func(conns.Stats) float64) {
		set.GetOrCreateGauge(metric, func() float64 { return f(l.Stats()) })
	}
	gauge("ramjet_client_connections"+lbl, func(s conns.Stats) float64 { return float64(s.Open) })
	gauge("ramjet_client_connections_parked"+lbl, func(s conns.Stats) float64 { return float64(s.Parked) })
	gauge("ramjet_client_connection_parks_total"+lbl, func(s conns.Stats) float64 { return float64(s.Parks) })
	gauge("ramjet_client_connection_late_reads_total"+lbl, func(s conns.Stats) float64 { return float64(s.LateReads) })
	gauge(`ramjet_client_connections_refused_total{listener="`+name+`",reason="max_conns"}`,
		func(s conns.Stats) float64 { return float64(s.RefusedMax) })
	gauge(`ramjet_client_connections_refused_total{listener="`+name+`",reason="per_ip"}`,
		func(s conns.Stats) float64 { return float64(s.RefusedPerIP) })
	gauge("ramjet_accept_errors_total"+lbl, func(s conns.Stats) float64 { return float64(s.AcceptErrors) })
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
		if s.lane != nil {
			// Stopping first: the connections the listener's Close still
			// hands out (conns' drain) are answered once, and closed.
			s.lane.Stop()
			_ = s.ln.Close() // no Serve of fasthttp's to close it
		}
		err = s.srv.ShutdownWithContext(ctx)
		// fasthttp closes only the listeners Serve has registered; right
		// after Start it may not have yet, and would then serve on.
		_ = s.ln.Close() // usually closed already
		if serr := <-s.done; serr != nil && !errors.Is(serr, net.ErrClosed) {
			err = errors.Join(err, serr)
		}
		err = errors.Join(err, s.waitLane(ctx))
	})
	return err
}

// waitLane waits for the lane's connections' goroutines, until ctx ends.
func (s *Server) waitLane(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s listener: connections still served: %w", s.cfg.Name, ctx.Err())
	}
}

// fasthttpLogger sends fasthttp's own messages (malformed requests and
// the like) to slog at debug level: they are the client's problem.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "source", "fasthttp")
}

// ConnStats are the listener's connection counts (zero before Start).
func (s *Server) ConnStats() conns.Stats {
	if s.ln == nil {
		return conns.Stats{}
	}
	return s.ln.Stats()
}
