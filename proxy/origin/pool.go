package origin

import (
	"context"
	"errors"
	"fmt"
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
	// IdleTimeout closes a pooled connection idle this long; 0 (or
	// negative) means 4s: under the 5s keep-alive timeout of Apache and
	// node, so that ramjet rather than the origin ends an idle
	// connection, and the origin rarely closes one just as it is reused.
	IdleTimeout time.Duration
	// MaxConns bounds the pooled connections per server, and apart from
	// them the new connections of retries; 0 means 512.
	MaxConns int
	// MaxQueue bounds the requests that wait for a connection when all
	// MaxConns of every server are busy; past it a request fails at once
	// with ErrBusy, as one does that waited ConnectTimeout for a
	// connection. Negative means no queue; 0 means MaxConns.
	MaxQueue int
	Health   HealthConfig
	// Retried, when set, is called each time a request is sent again on
	// a new connection because the origin had closed the pooled one it
	// went out on (retry.go). It must be cheap and safe for concurrent
	// use: a metric's counter.
	Retried func()
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
	// asking counts requests in Do: sending, or waiting for a connection.
	asking atomic.Int64
	admit  int64 // the most in Do at once: connections plus queue

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
	p := &Pool{cfg: cfg, log: log, admit: int64(cfg.MaxConns*len(cfg.Servers) + max(cfg.MaxQueue, 0))}
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
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 4 * time.Second
	}
	if c.MaxConns <= 0 {
		c.MaxConns = 512
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = c.MaxConns
	}
	if c.Health.Fall <= 0 {
		c.Health.Fall = 2
	}
	if c.Health.Rise <= 0 {
		c.Health.Rise = 2
	}
	return c
}

// server is one origin address with its clients and health state.
type server struct {
	addr string
	// hc keeps connections alive between requests; fresh dials one for
	// each request and closes it after, for the retry of a request whose
	// pooled connection the origin had closed.
	hc, fresh *fasthttp.HostClient

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
	return &server{addr: addr, hc: newHostClient(addr, cfg), fresh: newHostClient(addr, cfg)}, nil
}

func newHostClient(addr string, cfg Config) *fasthttp.HostClient {
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout}
	return &fasthttp.HostClient{
		Addr:                          addr,
		MaxConns:                      cfg.MaxConns,
		MaxConnWaitTimeout:            cfg.ConnectTimeout,
		ReadTimeout:                   cfg.HeaderTimeout,
		MaxIdleConnDuration:           cfg.IdleTimeout,
		StreamResponseBody:            true,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: false,
		DisablePathNormalizing:        true,
		Dial: func(a string) (net.Conn, error) {
			c, err := dialer.Dial("tcp", a)
			if err != nil {
				return nil, err
			}
			return newDeadlineConn(c, cfg.BodyTimeout), nil
		},
		RetryIfErr: noRetry,
	}
}

// Do sends req to a healthy server and reads the response header into
// resp; the body streams (resp.BodyStream) when the origin sends one.
// The caller owns req and resp and must close resp's body stream.
func (p *Pool) Do(req *fasthttp.Request, resp *fasthttp.Response) error {
	// A saturated origin gets no more than it can take plus a bounded
	// queue: the rest are answered at once (503), not parked in memory.
	if p.asking.Add(1) > p.admit {
		p.asking.Add(-1)
		return ErrBusy
	}
	defer p.asking.Add(-1)
	replay := replayable(req) // before a first attempt consumes a streamed body
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
			err := p.send(s, req, resp, replay)
			if err == nil {
				s.succeeded()
				return nil
			}
			if !dialFailed(err) {
				return classify(s.addr, err)
			}
			lastErr = classify(s.addr, err)
			if errors.Is(err, fasthttp.ErrNoFreeConns) {
				continue // saturated, not down: another server may have room
			}
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

// Load is how much of the pool is in use: requests sending or waiting
// for a connection, against the connections it may open. A caller that
// has optional work (a crawler's miss) sends it only while some is spare.
func (p *Pool) Load() (busy, capacity int) {
	return int(p.asking.Load()), p.cfg.MaxConns * len(p.servers)
}
