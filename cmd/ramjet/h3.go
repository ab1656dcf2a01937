package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/ramjet-proxy/ramjet/conf"
	"github.com/ramjet-proxy/ramjet/proxy"
	"github.com/ramjet-proxy/ramjet/proxy/h3"
)

// startH3 serves HTTP/3 on UDP at the TLS listener's address, with its
// certificates (tc asks the current store), limits and timeouts, and
// registers its counters with p's metrics.
func startH3(ctx context.Context, c *conf.Config, tc *tls.Config, p *proxy.Proxy, socks *sockets, log *slog.Logger) (*h3.Server, error) {
	// h3 logs the UDP buffer advice itself, through slog; quic-go would
	// print it again on the standard logger.
	_ = os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true") // cannot fail for this name
	udp, err := socks.listenUDP(c.TLS.Listen)
	if err != nil {
		return nil, fmt.Errorf("h3 listener: %w", err)
	}
	s, err := h3.NewServer(h3.Config{
		Name:                 "h3",
		Addr:                 c.TLS.Listen,
		Conn:                 udp,
		TLS:                  tc,
		HandshakeTimeout:     time.Duration(c.Server.ReadTimeout),
		IdleTimeout:          time.Duration(c.Server.IdleTimeout),
		WriteTimeout:         time.Duration(c.Server.WriteTimeout),
		MaxHeaderBytes:       int(c.Server.MaxHeaderBytes),
		MaxConcurrentStreams: c.TLS.H3MaxStreams,
		StreamWindow:         uint64(c.TLS.H3StreamWindow),
		ConnWindow:           uint64(c.TLS.H3ConnWindow),
		Disable0RTT:          !c.TLS.H3ZeroRTT,
	}, p.ServeFastHTTP, log)
	if err != nil {
		return nil, errors.Join(err, udp.Close())
	}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	st, set := s.Stats(), p.Metrics().Set()
	gauge := func(name string, f func() int64) { set.NewGauge(name, func() float64 { return float64(f()) }) }
	gauge(`ramjet_zero_rtt_requests_total{protocol="h3",result="accepted"}`, st.EarlyAccepted.Load)
	gauge(`ramjet_zero_rtt_requests_total{protocol="h3",result="rejected"}`, st.EarlyRejected.Load)
	gauge(`ramjet_h3_connections_total`, st.Conns.Load)
	gauge(`ramjet_h3_streams_refused_total{reason="goaway"}`, st.Rejected.Load)
	gauge(`ramjet_h3_protocol_errors_total`, st.Reset.Load)
	return s, nil
}

// altSvc is the Alt-Svc value of the HTTP/3 listener running, or ""
// (on a nil *edge too).
func (e *edge) altSvc() string {
	if e == nil {
		return ""
	}
	return e.alt
}

// altSvc is the Alt-Svc value that advertises HTTP/3 on the TLS
// listener's port, or "" when HTTP/3 is off.
func altSvc(c *conf.Config) string {
	if !c.TLS.HTTP3 || c.TLS.Listen == "" {
		return ""
	}
	_, port, err := net.SplitHostPort(c.TLS.Listen)
	if err != nil {
		return "" // cannot happen: conf validated the address
	}
	return `h3=":` + port + `"; ma=86400`
}
