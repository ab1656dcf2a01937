package origin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Config describes the origin servers and how to talk to them.
type Config struct {
	// Servers are absolute http:// URLs (scheme, host, port). Required.
	Servers []string
	// Timeouts: 0 means the default given, negative means none.

	// ConnectTimeout bounds a dial; default 2s.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for the response header after the
	// request is sent; default 30s.
	HeaderTimeout time.Duration
	// BodyTimeout bounds each idle gap while a body streams either way;
	// default 60s.
	BodyTimeout time.Duration
	// MaxConns bounds connections per server; 0 means 512.
	MaxConns int
	Health   HealthConfig
}

// HealthConfig drives health checks. With an empty Path only passive
// checks run: Fall failed dials in a row take a server out for Interval.
type HealthConfig struct {
	Path     string
	Interval time.Duration // 0 means 5s
	Timeout  time.Duration // 0 means 2s
	Fall     int           // 0 means 2
	Rise     int           // 0 means 2
}

// Pool sends requests to the healthy servers in turn, failing over to the
// next one when a server cannot be reached.
type Pool struct {
	cfg     Config
	servers []*server
	next    atomic.Uint32
	log     *slog.Logger

	closeOnce sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
}

// New builds a pool; Start begins active health checks.
func New(cfg Config, log *slog.Logger) (*Pool, error) {
	cfg = withDefaults(cfg)
	if len(cfg.Servers) == 0 {
		return nil, errors.New("origin: no servers configured")
	}
	p := &Pool{cfg: cfg, log: log}
	for _, raw := range cfg.Servers {
		s, err := newServer(raw, cfg)
		if err != nil {
			return nil, err
		}
		p.servers = append(p.servers, s)
	}
	return p, nil
}

func withDefaults(c Config) Config {
	def := func(d *time.Duration, v time.Duration) {
		switch {
		case *d == 0:
			*d = v
		case *d < 0:
			*d = 0 // none
		}
	}
	def(&c.ConnectTimeout, 2*time.Second)
	def(&c.HeaderTimeout, 30*time.Second)
	def(&c.BodyTimeout, 60*time.Second)
	def(&c.Health.Interval, 5*time.Second)
	def(&c.Health.Timeout, 2*time.Second)
	if c.MaxConns <= 0 {
		c.MaxConns = 512
	}
	if c.Health.Fall <= 0 {
		c.Health.Fall = 2
	}
	if c.Health.Rise <= 0 {
		c.Health.Rise = 2
	}
	return c
}

// server is one origin address with its client and health state.
type server struct {
	addr string
	hc   *fasthttp.HostClient

	fails     atomic.Int32
	oks       atomic.Int32
	downUntil atomic.Int64 // unix nanos; 0 = up
	down      atomic.Bool
}

func newServer(raw string, cfg Config) (*server, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("origin: server %q: want http://host:port", raw)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout}
	hc := &fasthttp.HostClient{
		Addr:                          addr,
		MaxConns:                      cfg.MaxConns,
		MaxConnWaitTimeout:            cfg.ConnectTimeout,
		ReadTimeout:                   cfg.HeaderTimeout,
		MaxIdleConnDuration:           30 * time.Second,
		StreamResponseBody:            true,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: false,
		DisablePathNormalizing:        true,
		Dial: func(a string) (net.Conn, error) {
			c, err := dialer.Dial("tcp", a)
			if err != nil {
				return nil, err
			}
			return &deadlineConn{Conn: c, bodyIdle: cfg.BodyTimeout}, nil
		},
		RetryIfErr: retryStaleConn,
	}
	return &server{addr: addr, hc: hc}, nil
}

// retryStaleConn retries only a request that found its pooled keep-alive
// connection closed by the origin, and only when it can be replayed:
// a timeout is never retried (it would double the wait).
func retryStaleConn(req *fasthttp.Request, attempts int, err error) (bool, bool) {
	if attempts > 1 || req.IsBodyStream() {
		return false, false
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, fasthttp.ErrConnectionClosed) {
		return false, false
	}
	m := req.Header.Method()
	return false, string(m) == fasthttp.MethodGet || string(m) == fasthttp.MethodHead
}

// Do sends req to a healthy server and reads the response header into
// resp; the body streams (resp.BodyStream) when the origin sends one.
// The caller owns req and resp and must close resp's body stream.
func (p *Pool) Do(req *fasthttp.Request, resp *fasthttp.Response) error {
	n := len(p.servers)
	start := int(p.next.Add(1)) % n
	var lastErr error
	now := time.Now().UnixNano()
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < n; i++ {
			s := p.servers[(start+i)%n]
			// First pass: healthy servers only. Second: anyone, so a
			// wrongly-marked pool never black-holes traffic.
			if pass == 0 && !s.available(now) {
				continue
			}
			if len(req.Header.Host()) == 0 { // HTTP/1.0 clients may send none
				req.Header.SetHost(s.addr)
			}
			err := s.hc.Do(req, resp)
			if err == nil {
				s.succeeded()
				return nil
			}
			if !dialFailed(err) {
				return classify(s.addr, err)
			}
			lastErr = classify(s.addr, err)
			if s.failed(p.cfg.Health) {
				p.log.Warn("origin marked down", "server", s.addr, "err", err)
			}
		}
		if lastErr != nil {
			return lastErr
		}
	}
	return lastErr
}

func (s *server) available(now int64) bool {
	if !s.down.Load() {
		return true
	}
	until := s.downUntil.Load()
	return until > 0 && now >= until
}

// failed counts a failure and reports whether it took the server down.
func (s *server) failed(h HealthConfig) bool {
	s.oks.Store(0)
	if int(s.fails.Add(1)) < h.Fall || s.down.Load() {
		if s.down.Load() && h.Path == "" {
			s.downUntil.Store(time.Now().Add(h.Interval).UnixNano())
		}
		return false
	}
	s.down.Store(true)
	if h.Path == "" {
		s.downUntil.Store(time.Now().Add(h.Interval).UnixNano())
	} else {
		s.downUntil.Store(0)
	}
	return true
}

func (s *server) succeeded() {
	s.fails.Store(0)
	if s.down.Load() && s.downUntil.Load() > 0 {
		s.down.Store(false)
		s.downUntil.Store(0)
	}
}

// Healthy reports each server's state, for status pages.
func (p *Pool) Healthy() map[string]bool {
	m := make(map[string]bool, len(p.servers))
	for _, s := range p.servers {
		m[s.addr] = !s.down.Load()
	}
	return m
}
